package mmq

import (
	"sync"

	"github.com/ggsim/ggsim/sim/q8"
)

// The integer half of every vec_dot: the exact int32 dots of one loaded weight row with
// the activation columns of a tile, 16 values at a time. The float half (each kernel's
// dot) reads them; the integers are exact, so how they are computed changes no bit.
//
// Method: three activation columns share one int64 (21-bit lanes, column 3t at bit 0,
// 3t+1 at bit 21, 3t+2 at bit 42), so one multiply of a weight value by the packed word
// does three multiply-accumulates. A 16-value dot of int8 values lies in
// [-16·128·128, 16·128·128] = [-2^18, 2^18], inside a 21-bit lane's [-2^20, 2^20), so the
// lanes never overflow into each other for any int8 input and are recovered exactly by
// sign extension.

// halfDots holds the 16 dots of one (row, column) pair per iteration: c[h] is the exact
// dot of the iteration's values 16h..16h+15 (h < 8 against y0, h >= 8 against y1).
type halfDots = [16]int32

// colPack is the packed activations of one tile's columns, reused across tiles.
type colPack struct {
	kb0, nkb, ncol, ntrip int
	p                     []int64    // [(kb-kb0)*ntrip + t][128]: columns 3t..3t+2 of y block kb
	xs                    [256]int64 // the loaded row's values widened once
	c                     []halfDots // per column of the tile: the dots of the current row and iteration

	// The 16-bit layout, for rows whose values all lie in [-15, 15] (4-bit types, Q2_K,
	// Q3_K): four columns per int64 (column 4t+l at bit 16l); a 16-value dot then lies in
	// [-16·15·128, 16·15·128] = [-30720, 30720], inside a 16-bit lane. Packed on first use.
	p16   []int64 // [(kb-kb0)*nquad + t][128]
	nquad int
	at    func(kb, jj int) *q8.BlockMMQ
}

var packPool = sync.Pool{New: func() any { return new(colPack) }}

// packColumns packs y blocks kbLo..kbHi-1 of the ncol columns at(kb, 0..ncol-1).
func packColumns(kbLo, kbHi, ncol int, at func(kb, jj int) *q8.BlockMMQ) *colPack {
	pk := packPool.Get().(*colPack)
	pk.kb0, pk.nkb, pk.ncol, pk.ntrip = kbLo, kbHi-kbLo, ncol, (ncol+2)/3
	n := pk.nkb * pk.ntrip * 128
	if cap(pk.p) < n {
		pk.p = make([]int64, n)
	}
	pk.p = pk.p[:n]
	if cap(pk.c) < ncol {
		pk.c = make([]halfDots, ncol)
	}
	pk.c = pk.c[:ncol]
	pk.at, pk.nquad, pk.p16 = at, 0, pk.p16[:0]
	for kb := kbLo; kb < kbHi; kb++ {
		for t := 0; t < pk.ntrip; t++ {
			dst := (*[128]int64)(pk.p[((kb-kbLo)*pk.ntrip+t)*128:])
			clear(dst[:])
			for l := 0; l < 3 && 3*t+l < ncol; l++ {
				qs := &at(kb, 3*t+l).Qs
				for v, q := range qs {
					dst[v] += int64(q) << (21 * l)
				}
			}
		}
	}
	return pk
}

func (pk *colPack) release() {
	pk.at = nil
	packPool.Put(pk)
}

// pack16 fills the 16-bit layout of the same y blocks.
func (pk *colPack) pack16() {
	pk.nquad = (pk.ncol + 3) / 4
	n := pk.nkb * pk.nquad * 128
	if cap(pk.p16) < n {
		pk.p16 = make([]int64, n)
	}
	pk.p16 = pk.p16[:n]
	for kb := pk.kb0; kb < pk.kb0+pk.nkb; kb++ {
		for t := 0; t < pk.nquad; t++ {
			dst := (*[128]int64)(pk.p16[((kb-pk.kb0)*pk.nquad+t)*128:])
			clear(dst[:])
			for l := 0; l < 4 && 4*t+l < pk.ncol; l++ {
				qs := &pk.at(kb, 4*t+l).Qs
				for v, q := range qs {
					dst[v] += int64(q) << (16 * l)
				}
			}
		}
	}
}

// dots fills pk.c[jj] with the half dots of the loaded row x and every column jj for the
// iteration whose first y block is kb. Three packed words (nine columns) share each load
// of a weight value.
func (pk *colPack) dots(x *xTile, kb int) {
	xs := &pk.xs
	var lo, hi int8
	for v, q := range x.qs {
		xs[v] = int64(q)
		lo, hi = min(lo, q), max(hi, q)
	}
	if lo >= -15 && hi <= 15 {
		if pk.nquad == 0 {
			pk.pack16()
		}
		pk.dots16(kb)
		return
	}
	pk.packedDots(pk.p, pk.ntrip, kb, false)
}

// unpack writes the three 21-bit lanes of the packed dots acc to columns j, j+1, j+2
// (those that exist).
func (pk *colPack) unpack(j int, acc *[16]int64) {
	var l [3][16]int32
	for h, s := range acc {
		l0 := s << 43 >> 43
		s = (s - l0) >> 21
		l1 := s << 43 >> 43
		l[0][h], l[1][h], l[2][h] = int32(l0), int32(l1), int32((s-l1)>>21)
	}
	n := min(3, len(pk.c)-j)
	for d := 0; d < n; d++ {
		pk.c[j+d] = l[d]
	}
}

// dots16 is dots in the 16-bit layout (the row in pk.xs lies in [-15, 15]).
func (pk *colPack) dots16(kb int) {
	pk.packedDots(pk.p16, pk.nquad, kb, true)
}

// packedDots multiplies the row in pk.xs with the nt packed words per y block of p (the
// 21-bit layout of dots or the 16-bit one of dots16) for the iteration whose first y
// block is kb, three words per load of a row value, and unpacks each word's 16 sums
// (unpack16 if quad, four columns per word; else unpack, three). The unpackers are called
// directly, not through a func value, so that acc stays on the stack.
func (pk *colPack) packedDots(p []int64, nt, kb int, quad bool) {
	xs := &pk.xs
	var acc [3][16]int64
	for t := 0; t < nt; t += 3 {
		n := min(3, nt-t)
		for half := 0; half < 2; half++ {
			o := ((kb+half-pk.kb0)*nt + t) * 128
			// Past the last word the first is read again (and its result dropped).
			pa := (*[128]int64)(p[o:])
			pb, pc := pa, pa
			if n > 1 {
				pb = (*[128]int64)(p[o+128:])
			}
			if n > 2 {
				pc = (*[128]int64)(p[o+256:])
			}
			xh := (*[128]int64)(xs[128*half:])
			for g := 0; g < 8; g++ {
				xv := (*[16]int64)(xh[16*g:])
				av := (*[16]int64)(pa[16*g:])
				bv := (*[16]int64)(pb[16*g:])
				cv := (*[16]int64)(pc[16*g:])
				var sa, sb, sc int64
				x0, x1, x2, x3 := xv[0], xv[1], xv[2], xv[3]
				sa += x0*av[0] + x1*av[1] + x2*av[2] + x3*av[3]
				sb += x0*bv[0] + x1*bv[1] + x2*bv[2] + x3*bv[3]
				sc += x0*cv[0] + x1*cv[1] + x2*cv[2] + x3*cv[3]
				x0, x1, x2, x3 = xv[4], xv[5], xv[6], xv[7]
				sa += x0*av[4] + x1*av[5] + x2*av[6] + x3*av[7]
				sb += x0*bv[4] + x1*bv[5] + x2*bv[6] + x3*bv[7]
				sc += x0*cv[4] + x1*cv[5] + x2*cv[6] + x3*cv[7]
				x0, x1, x2, x3 = xv[8], xv[9], xv[10], xv[11]
				sa += x0*av[8] + x1*av[9] + x2*av[10] + x3*av[11]
				sb += x0*bv[8] + x1*bv[9] + x2*bv[10] + x3*bv[11]
				sc += x0*cv[8] + x1*cv[9] + x2*cv[10] + x3*cv[11]
				x0, x1, x2, x3 = xv[12], xv[13], xv[14], xv[15]
				sa += x0*av[12] + x1*av[13] + x2*av[14] + x3*av[15]
				sb += x0*bv[12] + x1*bv[13] + x2*bv[14] + x3*bv[15]
				sc += x0*cv[12] + x1*cv[13] + x2*cv[14] + x3*cv[15]
				acc[0][8*half+g], acc[1][8*half+g], acc[2][8*half+g] = sa, sb, sc
			}
		}
		for d := 0; d < n; d++ {
			if quad {
				pk.unpack16(4*(t+d), &acc[d])
			} else {
				pk.unpack(3*(t+d), &acc[d])
			}
		}
	}
}

// unpack16 writes the four 16-bit lanes of acc to columns j..j+3 (those that exist).
func (pk *colPack) unpack16(j int, acc *[16]int64) {
	var l [4][16]int32
	for h, s := range acc {
		l0 := s << 48 >> 48
		s = (s - l0) >> 16
		l1 := s << 48 >> 48
		s = (s - l1) >> 16
		l2 := s << 48 >> 48
		l[0][h], l[1][h], l[2][h], l[3][h] = int32(l0), int32(l1), int32(l2), int32((s-l2)>>16)
	}
	n := min(4, len(pk.c)-j)
	for d := 0; d < n; d++ {
		pk.c[j+d] = l[d]
	}
}

// refHalfDots is the half dots of x with one column by dotI8 (the definition; tests and
// the hand cases use it).
func refHalfDots(x *xTile, y0, y1 *q8.BlockMMQ) *halfDots {
	var c halfDots
	for h := 0; h < 16; h++ {
		y := y0
		if h >= 8 {
			y = y1
		}
		o := 16 * (h % 8)
		c[h] = dotI8(x.qs[16*h:16*h+16], y.Qs[o:o+16])
	}
	return &c
}
