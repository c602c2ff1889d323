// Package bigref is the exact reference arithmetic of ggsim's tests, written once with
// math/big: the exact sum, difference, product or fused multiply-add of float64 operands
// (every binary16 and float32 is one), the float64 result of those operations where an
// operand is Inf or NaN, and rounding an exact value to an integer. Each test then
// rounds the exact value with its own model (binary16, float32 with or without FTZ).
package bigref

import (
	"fmt"
	"math/big"
)

// Prec is the precision of the exact results: enough for every sum, product or fma of
// float32 (so binary16) values, whose exact results span fewer than 600 bits.
const Prec = 1200

// Float returns x as a *big.Float (exact).
func Float(x float64) *big.Float { return new(big.Float).SetFloat64(x) }

// Exact returns the exact result of op on finite operands: '+' a+b, '-' a-b, '*' a·b,
// 'f' a·b+c (c is ignored by the others). It panics on an unknown op or a non-finite
// operand (a programming error in a test).
func Exact(op byte, a, b, c float64) *big.Float {
	z := new(big.Float).SetPrec(Prec)
	switch op {
	case '+':
		z.Add(Float(a), Float(b))
	case '-':
		z.Sub(Float(a), Float(b))
	case '*':
		z.Mul(Float(a), Float(b))
	case 'f':
		z.Mul(Float(a), Float(b))
		z.Add(z, Float(c))
	default:
		panic(fmt.Sprintf("bigref: unknown op %q", op))
	}
	return z
}

// NonFinite returns op on operands of which one is Inf or NaN, in float64: the result is
// then Inf or NaN, which float64 arithmetic gives exactly ('f' multiplies first: an Inf
// product meets c as IEEE says).
func NonFinite(op byte, a, b, c float64) float64 {
	switch op {
	case '+':
		return a + b
	case '-':
		return a - b
	case '*':
		return a * b
	case 'f':
		return float64(a*b) + c
	}
	panic(fmt.Sprintf("bigref: unknown op %q", op))
}

// RoundInt returns the integer nearest to x >= 0, ties to even, or away from zero if
// tiesAway.
func RoundInt(x *big.Float, tiesAway bool) *big.Int {
	n, _ := x.Int(nil) // truncated
	frac := new(big.Float).SetPrec(x.Prec()+64).Sub(x, new(big.Float).SetInt(n))
	switch c := frac.Cmp(big.NewFloat(0.5)); {
	case c > 0, c == 0 && (tiesAway || n.Bit(0) == 1):
		n.Add(n, big.NewInt(1))
	}
	return n
}
