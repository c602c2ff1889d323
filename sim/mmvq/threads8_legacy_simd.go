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

// The thread-lane path of Q4_0, Q5_0, Q4_1 and Q5_1 (see threads8_simd.go for the path
// and the argument that needs no lane checks). tpb = 2 threads per x block (iqs = 0, 2), so a vector holds the
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
// finite. Q5_0 is the same with 5-bit values (bit v of qh as bit 4 of value v: for the
// 16 qs bytes, bits 0..15 with the low nibbles, bits 16..31 with the high ones), |sumi| ≤
// 16·31·128 < 2^16, and FMUL(8, h2f(s8)). Q4_1 and Q5_1 (vecDotQ4_1): dd, ms =
// h2f(HMUL(d, d8)), h2f(HMUL(m, s8)) (sim.HMul8, halves again: multiples of 2^-24 below
// 2^16), tmp = FADD(tmp, FFMA(dd, I2F(sumi), FMUL(ms, 0.5))): multiples of 2^-25, a
// block's term below 2^32; a binary16 product can overflow to Inf from finite halves, so
// every dd and ms is checked (a running maximum of their magnitudes' bits, tested once
// per row group, which then goes to the checked path). A short last group of blocks is read from a zero-padded copy: a missing block's
// d4 and y are zero, its X·d4 is ±0, and a thread sum is never -0 (it starts at +0 and
// +0 + -0 = +0), so it stays unchanged.

// q40TCol is what the lanes of four x blocks read of a column: y's first and second 16
// bytes of blocks A,B (yl1, yh1) and C,D (yl2, yh2), and per lane h2f(d8) and s:
// -FMUL(c, h2f(s8)) (c = 4 for Q4_0, 8 for Q5_0) or h2f(s8) (Q4_1, Q5_1: c = 0), in lane
// order A A C C B B D D.
type q40TCol struct {
	yl1, yh1, yl2, yh2 [32]int8
	d8, s              [8]float32
}

// q40TCols builds a column's Q4_0 or Q5_0 lane table for nblocks x blocks (one q8_1
// block each; past nblocks, zeros) with c as above; it accepts a column whose d and s are
// finite.
func q40TCols(nblocks int, c float32) func(y []q8.Block, t []q40TCol) ([]q40TCol, bool) {
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
				d8, ns := sim.H2F(b.D), sim.H2F(b.S)
				if c != 0 {
					ns = sim.Neg(sim.Mul(c, ns))
				}
				for _, l := range lanes {
					e.d8[l], e.s[l] = d8, ns
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

// legacyThreads describes one of the types of legacyThreadsOf.
type legacyThreads struct {
	blockBytes, qhOff, qsOff int     // the block's size and where qh and qs start (qh < 0: none)
	mins                     bool    // the block has m after d (Q4_1, Q5_1)
	c                        float32 // the s8 factor 8·vdr/qi (Q4_0, Q5_0)
}

var (
	// VPSHUFB indices: byte b of each 16-byte half gets byte b/8 of the half's qh word
	// (bits 0..15, the low nibbles' 5th bits), resp. byte 2 + b/8 (bits 16..31)
	qhBytesLo = archsimd.LoadInt8x32(&[32]int8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1})
	qhBytesHi = archsimd.LoadInt8x32(&[32]int8{2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3})
	qhBit     = archsimd.LoadUint8x32(&[32]uint8{1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128})
	bit4      = archsimd.BroadcastUint8x32(0x10)
)

// fifthBits returns, for the 32-bit qh of blocks A (bytes 0..15) and B (bytes 16..31),
// the 5th bits of their low-nibble values (bit b of qh as 0x10 in byte b) and of their
// high-nibble values (bit 16+b).
func fifthBits(qhA, qhB uint32) (lo, hi archsimd.Uint8x32) {
	w := archsimd.BroadcastUint32x8(qhA).Select128FromPair(0, 3, archsimd.BroadcastUint32x8(qhB)).AsUint8x32()
	l := w.PermuteOrZeroGrouped(qhBytesLo).And(qhBit)
	h := w.PermuteOrZeroGrouped(qhBytesHi).And(qhBit)
	return bit4.Masked(l.Equal(qhBit)), bit4.Masked(h.Equal(qhBit))
}

// q40Threads and q50Threads are the Q4_0 and Q5_0 kernels on the thread-lane path.
func q40Threads(l *launch) rows8Func {
	return legacyThreadsOf[q40Lanes](l, legacyThreads{blockBytes: 18, qhOff: -1, qsOff: 2, c: 4})
}

func q50Threads(l *launch) rows8Func {
	return legacyThreadsOf[q50Lanes](l, legacyThreads{blockBytes: 22, qhOff: 2, qsOff: 6, c: 8})
}

// q41Threads and q51Threads are the Q4_1 and Q5_1 kernels on the thread-lane path.
func q41Threads(l *launch) rows8Func {
	return legacyThreadsOf[q41Lanes](l, legacyThreads{blockBytes: 20, qhOff: -1, qsOff: 4, mins: true})
}

func q51Threads(l *launch) rows8Func {
	return legacyThreadsOf[q51Lanes](l, legacyThreads{blockBytes: 24, qhOff: 4, qsOff: 8, mins: true})
}

var (
	half32  = archsimd.BroadcastFloat32x8(0.5)
	absMask = archsimd.BroadcastInt32x8(0x7fffffff)
	maxFin  = archsimd.BroadcastInt32x8(0x7f7fffff)
)

// quadHalves returns h2f of the halves at byte o of the four blocks of x (bb bytes each)
// in lane order A A C C B B D D, and whether all four are finite.
func quadHalves(x []byte, bb, o int, laneA archsimd.Mask32x8) (archsimd.Float32x8, bool) {
	hA, hB := f16.Half(le16(x[o:])), f16.Half(le16(x[bb+o:]))
	hC, hD := f16.Half(le16(x[2*bb+o:])), f16.Half(le16(x[3*bb+o:]))
	ok := finiteHalf(hA) && finiteHalf(hB) && finiteHalf(hC) && finiteHalf(hD)
	ac := archsimd.BroadcastFloat32x8(sim.H2F(hA)).Merge(archsimd.BroadcastFloat32x8(sim.H2F(hC)), laneA)
	bd := archsimd.BroadcastFloat32x8(sim.H2F(hB)).Merge(archsimd.BroadcastFloat32x8(sim.H2F(hD)), laneA)
	return ac.Select128FromPair(0, 3, bd), ok
}

// legacyThreadsOf is the kernel of Q4_0 or Q5_0 (described by k) on the thread-lane
// path, with the checked 8-row kernel of lanes type W for the groups it cannot take.
func legacyThreadsOf[W any, P interface {
	*W
	lanes8
}](l *launch, k legacyThreads) rows8Func {
	p := l.plan
	nt := p.ThreadsPerRow()
	checked := checkedPath(l, rows8Of[W, P])
	if !useThreads8 || p.QI/p.VDR != 2 || nt%32 != 0 || nt/8 > 16 || p.BlocksPerIter != nt/2 || p.QK != 32 {
		return rows8Of[W, P](l)
	}
	bb, qsOff, qhOff := k.blockBytes, k.qsOff, k.qhOff
	nv, nw, bpi, nblocks := nt/8, nt/32, p.BlocksPerIter, l.nblocks
	laneA := q80LaneA.Equal(ones32) // lanes 0, 1, 4, 5
	cache := colCache[q40TCol]{build: q40TCols(nblocks, k.c)}
	mins := k.mins
	var tabs [tiling.MMVQMaxBatchSize][]q40TCol
	var tmp [tiling.MMVQMaxBatchSize][16]archsimd.Float32x8
	var ord [16]archsimd.Float32x8
	pad := make([]byte, 4*bb) // the last blocks, zero-padded to four
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		nc := len(ys)
		if !columnTables(&cache, ys, &tabs) {
			checked(rows, ys, out) // a column the kernel does not take (its table builder says which)
			return
		}
		var inf archsimd.Int32x8 // the largest |dd|, |ms| bits: Inf or NaN when above maxFin
		for q, row := range rows {
			row = row[:nblocks*bb]
			zeroSums(&tmp, nc, nv)
			vb := 0 // (kbx % bpi)/4: the vector of blocks kbx..kbx+3
			for kbx := 0; kbx < nblocks; kbx += 4 {
				var x []byte
				if kbx+4 <= nblocks {
					x = row[kbx*bb : (kbx+4)*bb]
				} else {
					clear(pad)
					copy(pad, row[kbx*bb:])
					x = pad
				}
				x = x[:4*bb]
				d4, ok := quadHalves(x, bb, 0, laneA)
				var m4 archsimd.Float32x8
				if mins {
					var okm bool
					m4, okm = quadHalves(x, bb, 2, laneA)
					ok = ok && okm
				}
				if !ok {
					checked(rows, ys, out) // a d or m is Inf or NaN
					return
				}
				var z archsimd.Uint8x32
				Q1 := z.SetLo(load16(x, qsOff)).SetHi(load16(x, bb+qsOff))
				Q2 := z.SetLo(load16(x, 2*bb+qsOff)).SetHi(load16(x, 3*bb+qsOff))
				L1, L2 := Q1.And(nibByte), Q2.And(nibByte)
				H1 := Q1.AsUint32x8().ShiftRight(four32).AsUint8x32().And(nibByte)
				H2 := Q2.AsUint32x8().ShiftRight(four32).AsUint8x32().And(nibByte)
				if qhOff >= 0 {
					lo, hi := fifthBits(uint32(le32(x[qhOff:])), uint32(le32(x[bb+qhOff:])))
					L1, H1 = L1.Or(lo), H1.Or(hi)
					lo, hi = fifthBits(uint32(le32(x[2*bb+qhOff:])), uint32(le32(x[3*bb+qhOff:])))
					L2, H2 = L2.Or(lo), H2.Or(hi)
				}
				for j := range nc {
					e := &tabs[j][kbx/4]
					s1 := L1.DotProductPairsSaturated(archsimd.LoadInt8x32(&e.yl1)).Add(H1.DotProductPairsSaturated(archsimd.LoadInt8x32(&e.yh1))).DotProductPairs(ones16)
					s2 := L2.DotProductPairsSaturated(archsimd.LoadInt8x32(&e.yl2)).Add(H2.DotProductPairsSaturated(archsimd.LoadInt8x32(&e.yh2))).DotProductPairs(ones16)
					sumi := s1.AddPairsGrouped(s2).ConvertToFloat32()
					t := &tmp[j][vb]
					if !mins {
						X := archsimd.LoadFloat32x8(&e.d8).MulAdd(sumi, archsimd.LoadFloat32x8(&e.s))
						*t = X.MulAdd(d4, *t)
						continue
					}
					dd := sim.HMul8(d4, archsimd.LoadFloat32x8(&e.d8))
					ms := sim.HMul8(m4, archsimd.LoadFloat32x8(&e.s))
					inf = inf.Max(dd.AsInt32x8().And(absMask)).Max(ms.AsInt32x8().And(absMask))
					*t = t.Add(dd.MulAdd(sumi, ms.Mul(half32)))
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
		if mins && inf.Greater(maxFin).ToBits() != 0 {
			checked(rows, ys, out) // a binary16 product overflowed
			return
		}
		threads8Groups.fast.Add(1)
	}
}
