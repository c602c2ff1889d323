package cuda

import (
	"encoding/binary"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/f16"
)

func TestSweepStat(t *testing.T) {
	if sweepStatSize != 216 {
		t.Fatalf("sweepStat is %d bytes; struct ggsim_stat is 216", sweepStatSize)
	}
	src, err := KernelSource("sweep.cu")
	if err != nil {
		t.Fatal(err)
	}
	// The two kernel files declare the same block.
	decl := src[strings.Index(src, "struct ggsim_stat {"):]
	decl = decl[:strings.Index(decl, "};")]
	if h, _ := KernelSource("half.cu"); !strings.Contains(h, decl) {
		t.Fatal("half.cu's struct ggsim_stat differs from sweep.cu's")
	}
	st := sweepStat{Mism: 20, NaN: 1<<32 | 0x7fffffff, ExN: 30}
	for i := range st.Ex {
		st.Ex[i] = [3]uint32{uint32(i), 1, 2}
	}
	s := st.sweep("x")
	if s.Mismatches != 20 || !s.SawNaN || s.FirstNaN != 0x7fffffff || len(s.Examples) != 16 {
		t.Fatalf("%+v", s)
	}
	if want := "x, all 2^32 inputs: 20 mismatches, first NaN result 0x7fffffff [in=0x00000000 got=0x00000001 want=0x00000002] [in=0x00000001 "; !strings.HasPrefix(s.String(), want) {
		t.Fatalf("String: %s", s)
	}
	// Fewer mismatches than claimed slots: only the recorded ones; no NaN seen.
	s = sweepStat{Mism: 2, ExN: 2, Ex: st.Ex}.sweep("y")
	if s.SawNaN || len(s.Examples) != 2 || strings.Contains(s.String(), "NaN") {
		t.Fatalf("%+v", s)
	}
	if s := (sweepStat{}).sweep("z"); s.Mismatches != 0 || len(s.Examples) != 0 || s.String() != "z, all 2^32 inputs: 0 mismatches" {
		t.Fatalf("%q", s)
	}
}

func TestFloatSpecialsTable(t *testing.T) {
	src, err := KernelSource("specials.cu")
	if err != nil {
		t.Fatal(err)
	}
	// One o[k] per entry, in order, and every argument an input.
	for k, sp := range FloatSpecials {
		if !strings.Contains(src, "o["+itoa(k)+"] =") && !strings.Contains(src, "o["+itoa(k)+"]=") {
			t.Errorf("FloatSpecials[%d] (%s): the kernel writes no o[%d]", k, sp.Expr, k)
		}
		for _, a := range sp.Args {
			if a < 0 || a >= len(FloatSpecialInputs) {
				t.Errorf("FloatSpecials[%d]: argument %d out of range", k, a)
			}
		}
	}
	if strings.Contains(src, "o["+itoa(len(FloatSpecials))+"]") {
		t.Errorf("the kernel writes more than %d outputs", len(FloatSpecials))
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestHalfOpsRef(t *testing.T) {
	if len(HalfOpsB) != 16 || len(HalfOpsC) != 16 {
		t.Fatal("16 operand pairs")
	}
	// a = 1, b = 2, c = -1: 3, -1, 2, 1, -2.
	got := HalfOpsRef(0x3c00, 0x4000, 0xbc00)
	want := [HalfOpsPerCase]uint16{0x4200, 0xbc00, 0x4000, 0x3c00, 0xc000}
	if got != want {
		t.Fatalf("HalfOpsRef = %04x, want %04x", got, want)
	}
	// The fifth result is the high half of the half2 product {a,b}*{b,c}.
	for _, x := range [][3]uint16{{0x0001, 0x3800, 0x7bff}, {0x7e00, 0x0400, 0x8001}} {
		p := f16.Mul2(f16.Half2{Lo: f16.Half(x[0]), Hi: f16.Half(x[1])}, f16.Half2{Lo: f16.Half(x[1]), Hi: f16.Half(x[2])})
		if r := HalfOpsRef(x[0], x[1], x[2]); r[4] != uint16(p.Hi) || r[2] != uint16(p.Lo) {
			t.Fatalf("%04x: %04x, Mul2 %04x", x, r, p)
		}
	}
}

// The FTZ cases lie next to 2^-126: every exact product (mul) or a*b+c (fma) is within
// 2^-140 of it, and both sides of it occur.
func TestTinyCases(t *testing.T) {
	cs := TinyCases()
	if len(cs) != TinyMulCases+TinyFMACases {
		t.Fatalf("%d cases", len(cs))
	}
	var below, above int
	for i, c := range cs {
		a, b, cc := new(big.Float).SetFloat64(float64(math.Float32frombits(c[0]))), new(big.Float).SetFloat64(float64(math.Float32frombits(c[1]))), new(big.Float).SetFloat64(float64(math.Float32frombits(c[2])))
		if math.Float32frombits(c[1]) < 0x1p-126 || math.Float32frombits(c[0]) >= 2 {
			t.Fatalf("case %d: operands %#08x", i, c)
		}
		v := new(big.Float).SetPrec(200).Mul(a, b)
		v.Add(v, cc)
		d := new(big.Float).SetPrec(200).Sub(v, big.NewFloat(0x1p-126))
		if d.Abs(d).Cmp(big.NewFloat(0x1p-140)) > 0 {
			t.Fatalf("case %d %#08x: a*b+c = %g is not next to 2^-126", i, c, v)
		}
		if v.Cmp(big.NewFloat(0x1p-126)) < 0 {
			below++
		} else {
			above++
		}
	}
	if below < 1000 || above < 1000 {
		t.Fatalf("%d below and %d at or above 2^-126", below, above)
	}
}

func TestLittleEndian(t *testing.T) {
	b := LittleEndian([]uint32{0x01020304, 0xa0b0c0d0})
	if len(b) != 8 || binary.LittleEndian.Uint32(b) != 0x01020304 || binary.LittleEndian.Uint32(b[4:]) != 0xa0b0c0d0 {
		t.Fatalf("%x", b)
	}
	h := LittleEndian([]uint16{0x1234, 0xfffe})
	if len(h) != 4 || h[0] != 0x34 || h[1] != 0x12 || h[2] != 0xfe || h[3] != 0xff {
		t.Fatalf("%x", h)
	}
}
