//go:build goexperiment.simd && amd64

package mmvq

import (
	"math"
	"simd/archsimd"
	"unsafe"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/tiling"
)

// The thread-lane path of Q4_0 (see threads8_simd.go for the path and the argument that
// needs no lane checks). tpb = 2 threads per x block (iqs = 0, 2), so a vector holds the
// threads of four consecutive blocks of an iteration (A, B, C, D = kbx..kbx+3, kbx a
// multiple of 4). Thread t's dot covers ints 2t, 2t+1 of the block's qs: their low
// nibbles with the q8_1 ints 2t, 2t+1 and their high nibbles with ints 2t+4, 2t+5, i.e.
// bytes 8t..8t+7 of the low nibbles with bytes 8t..8t+7 of y and of the high nibbles with
// bytes 16+8t..16+8t+7. The 16 low-nibble bytes of A and B form one vector with y's first
// halves of A and B, the high nibbles another with the second halves (VPMADDUBSW: the
// nibbles unsigned, y signed, so a -128 is exact); VPMADDWD and VPHADDD of the A,B and
// C,D vectors leave each thread's sumi in lane order A0 A1 C0 C1 B0 B1 D0 D1, which
// q80TidOrder puts in thread order. Floats: X = FFMA(h2f(d8), I2F(sumi), -FMUL(4,
// h2f(s8))) and tmp = FFMA(X, h2f(d4), tmp): d8·sumi and 4·s8 are multiples of 2^-24
// (halves times integers), X·d4 of 2^-48; |sumi| ≤ 16·15·128 < 2^15, so |X| < 2^16·2^15 +
// 2^18 and a block's term is below 2^48: the argument holds where d4, d8 and s8 are
// finite. A short last group of blocks is read from a zero-padded copy: a missing block's
// d4 and y are zero, its X·d4 is ±0, and a thread sum is never -0 (it starts at +0 and
// +0 + -0 = +0), so it stays unchanged.

// q40TCol is what the lanes of four x blocks read of a column: y's first and second 16
// bytes of blocks A,B (yl1, yh1) and C,D (yl2, yh2), and per lane h2f(d8) and
// -FMUL(4, h2f(s8)), in lane order A A C C B B D D.
type q40TCol struct {
	yl1, yh1, yl2, yh2 [32]int8
	d8, ns             [8]float32
}

// q40TCols builds a column's Q4_0 lane table for nblocks x blocks (one q8_1 block each;
// past nblocks, zeros); it accepts a column whose d and s are finite.
func q40TCols(nblocks int) func(y []q8.Block, t []q40TCol) ([]q40TCol, bool) {
	return func(y []q8.Block, t []q40TCol) ([]q40TCol, bool) {
		t = grow(t, (nblocks+3)/4)
		ok := true
		for kq := range t {
			e := &t[kq]
			*e = q40TCol{}
			for i, lanes := range [4][2]int{{0, 1}, {4, 5}, {2, 3}, {6, 7}} { // A, B, C, D
				kbx := 4*kq + i
				if kbx >= nblocks {
					continue
				}
				b := &y[kbx]
				ok = ok && finiteHalf(b.D) && finiteHalf(b.S)
				yl, yh := &e.yl1, &e.yh1
				if i >= 2 {
					yl, yh = &e.yl2, &e.yh2
				}
				copy(yl[16*(i%2):], b.Qs[:16])
				copy(yh[16*(i%2):], b.Qs[16:])
				d8, ns := sim.H2F(b.D), sim.Neg(sim.Mul(4, sim.H2F(b.S)))
				for _, l := range lanes {
					e.d8[l], e.ns[l] = d8, ns
				}
			}
		}
		return t, ok
	}
}

var nibByte = archsimd.BroadcastUint8x32(0x0F)

// load16 loads 16 bytes at b[o:].
func load16(b []byte, o int) archsimd.Uint8x16 {
	return archsimd.LoadUint8x16((*[16]uint8)(unsafe.Pointer(unsafe.SliceData(b[o : o+16]))))
}

// q40Threads is the Q4_0 kernel on the thread-lane path (see q4KThreads).
func q40Threads(l *launch) rows8Func {
	p := l.plan
	nt := p.ThreadsPerRow()
	var checkedF rows8Func
	checked := func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		if checkedF == nil {
			checkedF = rows8Of[q40Lanes](l)
		}
		checkedF(rows, ys, out)
	}
	if !useThreads8 || p.QI/p.VDR != 2 || nt%32 != 0 || nt/8 > 16 || p.BlocksPerIter != nt/2 || p.QK != 32 {
		return rows8Of[q40Lanes](l)
	}
	const blockBytes = 18
	nv, nw, bpi, nblocks := nt/8, nt/32, p.BlocksPerIter, l.nblocks
	laneA := q80LaneA.Equal(ones32) // lanes 0, 1, 4, 5
	cache := colCache[q40TCol]{build: q40TCols(nblocks)}
	var tabs [tiling.MMVQMaxBatchSize][]q40TCol
	var tmp [tiling.MMVQMaxBatchSize][16]archsimd.Float32x8
	var ord [16]archsimd.Float32x8
	var pad [4 * blockBytes]byte // the last blocks, zero-padded to four
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		nc := len(ys)
		for j, y := range ys {
			t, ok := cache.get(y)
			if !ok {
				threads8Groups.checked.Add(1)
				checked(rows, ys, out)
				return
			}
			tabs[j] = t
		}
		for q, row := range rows {
			row = row[:nblocks*blockBytes]
			for j := range nc {
				for v := range nv {
					tmp[j][v] = zero8
				}
			}
			vb := 0 // (kbx % bpi)/4: the vector of blocks kbx..kbx+3
			for kbx := 0; kbx < nblocks; kbx += 4 {
				var x []byte
				if kbx+4 <= nblocks {
					x = row[kbx*blockBytes : (kbx+4)*blockBytes]
				} else {
					pad = [4 * blockBytes]byte{}
					copy(pad[:], row[kbx*blockBytes:])
					x = pad[:]
				}
				hA, hB := f16.Half(le16(x)), f16.Half(le16(x[blockBytes:]))
				hC, hD := f16.Half(le16(x[2*blockBytes:])), f16.Half(le16(x[3*blockBytes:]))
				if !finiteHalf(hA) || !finiteHalf(hB) || !finiteHalf(hC) || !finiteHalf(hD) {
					threads8Groups.checked.Add(1)
					checked(rows, ys, out) // a d is Inf or NaN
					return
				}
				var z archsimd.Uint8x32
				Q1 := z.SetLo(load16(x, 2)).SetHi(load16(x, blockBytes+2))
				Q2 := z.SetLo(load16(x, 2*blockBytes+2)).SetHi(load16(x, 3*blockBytes+2))
				L1, L2 := Q1.And(nibByte), Q2.And(nibByte)
				H1 := Q1.AsUint32x8().ShiftRight(four32).AsUint8x32().And(nibByte)
				H2 := Q2.AsUint32x8().ShiftRight(four32).AsUint8x32().And(nibByte)
				dAC := archsimd.BroadcastFloat32x8(sim.H2F(hA)).Merge(archsimd.BroadcastFloat32x8(sim.H2F(hC)), laneA)
				dBD := archsimd.BroadcastFloat32x8(sim.H2F(hB)).Merge(archsimd.BroadcastFloat32x8(sim.H2F(hD)), laneA)
				d4 := dAC.Select128FromPair(0, 3, dBD) // A A C C B B D D
				for j := range nc {
					e := &tabs[j][kbx/4]
					s1 := L1.DotProductPairsSaturated(archsimd.LoadInt8x32(&e.yl1)).Add(H1.DotProductPairsSaturated(archsimd.LoadInt8x32(&e.yh1))).DotProductPairs(ones16)
					s2 := L2.DotProductPairsSaturated(archsimd.LoadInt8x32(&e.yl2)).Add(H2.DotProductPairsSaturated(archsimd.LoadInt8x32(&e.yh2))).DotProductPairs(ones16)
					X := archsimd.LoadFloat32x8(&e.d8).MulAdd(s1.AddPairsGrouped(s2).ConvertToFloat32(), archsimd.LoadFloat32x8(&e.ns))
					t := &tmp[j][vb]
					*t = X.MulAdd(d4, *t)
				}
				if vb++; vb == bpi/4 {
					vb = 0
				}
			}
			for j := range nc {
				for v := range nv {
					ord[v] = tmp[j][v].Permute(q80TidOrder)
				}
				out[j][q] = math.Float32frombits(threadsReduce(ord[:nv], nw))
			}
		}
		threads8Groups.fast.Add(1)
	}
}
