package oracle

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// The references as they were before they were computed by rows (commit 47dbb87): the
// whole matrix dequantized to float64, MulMatRef's value one gonum product, the MoE
// reference one whole-expert reference per (token, slot). Kept so that
// TestRowReferencesSame can show the row-by-row references give the same bits.
var (
	OldMulMatRef      = oldMulMatRef
	OldMulMatRefOn    = oldMulMatRefOn
	OldMulMatIDRefOn  = oldMulMatIDRefOn
	GemmParallelOrder = gemmParallel
)

func oldMulMatRef(t quant.Type, a []byte, K, N int, b []float32, M int) (*Reference, error) {
	x, err := oldDequantizeAll(t, a, K, N, b, M)
	if err != nil {
		return nil, err
	}
	rs, err := t.RowSize(int64(K)) // checked by dequantizeAll
	if err != nil {
		return nil, err
	}
	y := make([]float64, M*K)
	for i, v := range b {
		y[i] = float64(v)
	}
	X := mat.NewDense(N, K, x)
	Y := mat.NewDense(M, K, y)
	var C mat.Dense
	C.Mul(X, Y.T()) // N×M

	ref := &Reference{Value: make([]float64, N*M), Bound: make([]float64, N*M)}
	nb := (K + 31) / 32
	// Per column and block: e_b and the half-rounding error of the block sum.
	eb := make([]float64, M*nb)
	es := make([]float64, M*nb)
	for j := 0; j < M; j++ {
		for blk := 0; blk < nb; blk++ {
			amax, s := 0.0, 0.0
			for k := blk * 32; k < min(K, blk*32+32); k++ {
				v := math.Abs(y[j*K+k])
				s += v
				amax = math.Max(amax, v)
			}
			d := amax / 127
			eb[j*nb+blk] = 0.5*d*(1+0x1p-20) + 127*math.Max(0x1p-11*d, 0x1p-25)
			es[j*nb+blk] = math.Max(0x1p-11*s, 0x1p-25)
		}
	}
	hoeffding := math.Log(2/0x1p-40) / 2
	gamma := 1.1 * (float64(K)/32 + 16) * 0x1p-24
	for i := 0; i < N; i++ {
		xi := x[i*K : (i+1)*K]
		xrow := a[int64(i)*rs : int64(i+1)*rs]
		for j := 0; j < M; j++ {
			yj := y[j*K : (j+1)*K]
			var sq, sterm, l1 float64
			for blk := 0; blk < nb; blk++ {
				var mx float64
				for k := blk * 32; k < min(K, blk*32+32); k++ {
					mx = math.Max(mx, math.Abs(xi[k]))
				}
				ob := offsetMag(t, xrow, blk, mx)
				e := eb[j*nb+blk]
				for k := blk * 32; k < min(K, blk*32+32); k++ {
					w := 2 * (math.Abs(xi[k]) + ob) * e
					sq += w * w
					l1 += math.Abs(xi[k] * yj[k])
				}
				sterm += ob * es[j*nb+blk]
				if t == quant.Q4_1 || t == quant.Q5_1 {
					// __hmul2(dm4, ds8): d4·d8 and m4·s8 rounded to binary16 (relative 2^-11
					// or absolute 2^-25 once subnormal): error ≤ Σ|q4||q8|·err(d4d8) + err(m4s8).
					d4 := math.Abs(float64(blockScale(t, xrow, blk).ToFloat32()))
					d8 := eb[j*nb+blk] / 0.5 // ≥ d: a safe stand-in for the activation scale
					var sq8 float64          // Σ|q4|·|q8| ≤ 31·Σ|q8| ≤ 31·32·127
					for k := blk * 32; k < min(K, blk*32+32); k++ {
						sq8 += 31 * (math.Abs(yj[k])/math.Max(d8, 1e-300) + 1)
					}
					sterm += sq8*math.Max(0x1p-11*d4*d8, 0x1p-25) + math.Max(0x1p-11*ob*32*127*d8, 0x1p-25)
				}
			}
			ref.Value[j*N+i] = C.At(i, j)
			ref.Bound[j*N+i] = math.Sqrt(hoeffding*sq) + sterm + gamma*l1
		}
	}
	return ref, nil
}

func oldMulMatRefOn(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) (*Reference, error) {
	p, ok := pathOf(dev, t, K, N, M)
	if !ok {
		return oldMulMatRef(t, a, K, N, b, M)
	}
	ref, err := oldTruth(t, a, K, N, b, M)
	if err != nil {
		return nil, err
	}
	acc, err := newAccumulation(dev, t, p, K, N, M, false)
	if err != nil {
		return oldMulMatRef(t, a, K, N, b, M) // a launch the plans do not describe
	}
	if err := oldKernelBound(ref, t, p, a, K, N, b, M, acc); err != nil {
		return nil, err
	}
	return ref, nil
}

func oldMulMatIDRefOn(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) (*Reference, error) {
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return nil, err
	}
	if K <= 0 || N <= 0 || E <= 0 || B1 <= 0 || T <= 0 || U <= 0 || len(ids) != T*U || len(b) != K*B1*T || int64(len(as)) != rs*int64(N*E) {
		return nil, fmt.Errorf("oracle: MUL_MAT_ID shape K=%d N=%d E=%d B1=%d T=%d U=%d does not fit %d weight bytes, %d activations, %d ids", K, N, E, B1, T, U, len(as), len(b), len(ids))
	}
	d := tiling.MulMatID(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(T), Experts: int64(E)})
	var p kpath
	ok := sim.CCIsNVIDIA(dev.CC)
	switch d.Kernel {
	case tiling.KernelMMVQ, tiling.KernelMMVQMoE:
		p = pathMMVQ
	case tiling.KernelMMQ:
		mp, err := tiling.MakeMMQPlan(&dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(T), Experts: int64(E)})
		ok = ok && err == nil && !mp.UseNativeFP4
		p = pathDP4A
		if ok && mp.Config.UseMMADataLayout {
			p = pathMMA
		}
	default:
		ok = false
	}
	if _, known := kernelModels[p][t]; !known {
		ok = false
	}
	var acc *accumulation
	if ok {
		if p == pathMMVQ {
			var aerr error
			if acc, aerr = newMMVQAccumulation(dev, t, K, T, true); aerr != nil {
				ok = false // a launch the MMVQ plan does not describe: MulMatRef's bound
			}
		} else {
			acc = &accumulation{path: p, qk: t.BlockSize(), agnostic: true, adds: kernelModels[p][t].adds}
		}
	}
	expBytes := int(rs) * N
	out := &Reference{Value: make([]float64, N*U*T), Bound: make([]float64, N*U*T)}
	if ok {
		out.Center = make([]float64, N*U*T)
	}
	for tok := 0; tok < T; tok++ {
		for u := 0; u < U; u++ {
			e := int(ids[tok*U+u])
			if e < 0 || e >= E {
				return nil, fmt.Errorf("oracle: ids[%d][%d] = %d, outside 0..%d", tok, u, e, E-1)
			}
			r := (tok*B1 + u%B1) * K
			col := b[r : r+K]
			w := as[e*expBytes : (e+1)*expBytes]
			var ref *Reference
			if ok {
				ref, err = oldTruth(t, w, K, N, col, 1)
				if err == nil {
					err = oldKernelBound(ref, t, p, w, K, N, col, 1, acc)
				}
			} else {
				ref, err = oldMulMatRef(t, w, K, N, col, 1)
			}
			if err != nil {
				return nil, err
			}
			o := (tok*U + u) * N
			copy(out.Value[o:o+N], ref.Value)
			copy(out.Bound[o:o+N], ref.Bound)
			if ok {
				copy(out.Center[o:o+N], ref.Center)
			}
		}
	}
	return out, nil
}

func oldTruth(t quant.Type, a []byte, K, N int, b []float32, M int) (*Reference, error) {
	x, err := oldDequantizeAll(t, a, K, N, b, M)
	if err != nil {
		return nil, err
	}
	ref := &Reference{Value: make([]float64, N*M), Bound: make([]float64, N*M)}
	for i := 0; i < N; i++ {
		xi := x[i*K : (i+1)*K]
		for j := 0; j < M; j++ {
			yj := b[j*K : (j+1)*K]
			var s float64
			for k, v := range xi {
				s += v * float64(yj[k])
			}
			ref.Value[j*N+i] = s
		}
	}
	return ref, nil
}

func oldDequantizeAll(t quant.Type, a []byte, K, N int, b []float32, M int) ([]float64, error) {
	if K <= 0 || N <= 0 || M <= 0 {
		return nil, fmt.Errorf("oracle: bad shape K=%d N=%d M=%d", K, N, M)
	}
	if len(b) != K*M {
		return nil, fmt.Errorf("oracle: b has %d values, want K*M = %d", len(b), K*M)
	}
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return nil, err
	}
	if int64(len(a)) != rs*int64(N) {
		return nil, fmt.Errorf("oracle: a has %d bytes, want %d rows of %d", len(a), N, rs)
	}
	x := make([]float64, N*K)
	row := make([]float32, K)
	for i := 0; i < N; i++ {
		if err := quant.DequantizeRow(t, a[int64(i)*rs:int64(i+1)*rs], row); err != nil {
			return nil, fmt.Errorf("oracle: row %d: %w", i, err)
		}
		for k, v := range row {
			x[i*K+k] = float64(v)
		}
	}
	return x, nil
}

func oldKernelBound(ref *Reference, t quant.Type, p kpath, a []byte, K, N int, b []float32, M int, acc *accumulation) error {
	m := kernelModels[p][t]
	x, err := oldDequantizeAll(t, a, K, N, b, M)
	if err != nil {
		return err
	}
	rs, _ := t.RowSize(int64(K))
	cols := make([]*qcol, M)
	for j := range cols {
		g := 0
		if m.offset {
			g = m.group
		}
		cols[j] = new(qcol) // a fresh column each time, as quantizeCol made it before it reused one
		if err = quantizeCol(b[j*K:(j+1)*K], K, p, t, g, cols[j]); err != nil {
			return err
		}
	}
	piece := 16
	if p == pathMMVQ {
		piece = 4
	}
	ref.Center = make([]float64, N*M)
	nb := (K + 31) / 32
	E := make([]float64, nb)  // exact kernel value per 32-value block
	Mg := make([]float64, nb) // Σ |t_p| per 32-value block
	for i := 0; i < N; i++ {
		w := new(qrow) // a fresh row each time, as loadRow made it before it reused one
		if err := loadRow(t, m, a[int64(i)*rs:int64(i+1)*rs], x[i*K:(i+1)*K], K, w); err != nil {
			return err
		}
		for j := 0; j < M; j++ {
			c := cols[j]
			blockTerms(m, w, c, K, piece, E, Mg)
			var center, mags float64
			for bi := range E {
				center += E[bi]
				mags += Mg[bi]
			}
			nodes, depth := acc.nodes(E, Mg, i, j)
			ops := float64(m.r+depth) * float64(nb)
			bound := unitRound * (float64(m.r)*mags + nodes)
			bound *= 1 + 2*float64(m.r+depth+8)*unitRound
			bound += (4*float64(K) + ops + 64) * ftzAbs
			ref.Center[j*N+i] = center
			ref.Bound[j*N+i] = bound
		}
	}
	return nil
}
