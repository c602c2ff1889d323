package cuda

import (
	"fmt"
	"strings"
)

// The fragment layout of mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 as the PTX
// ISA documents it (section "Matrix Fragments for mma.m16n8k32"), with
// groupID = lane/4 and tig = lane%4 ("threadID_in_group"):
//
//	A (16x32, row-major), 16 int8 a_i per lane in 4 registers (a_i is byte i%4 of
//	register i/4): row = groupID for i < 4 or 8 <= i < 12, else groupID+8;
//	col (k) = 4*tig + i%4, plus 16 for i >= 8.
//	B (32x8, column-major), 8 int8 b_i per lane in 2 registers:
//	row (k) = 4*tig + i%4, plus 16 for i >= 4; col = groupID.
//	C, D (16x8), 4 int32 c_i per lane: row = groupID for i < 2, else groupID+8;
//	col = 2*tig + i%2.
//
// The probe checks this layout against the hardware (see CheckMmaLayout).

// MmaA returns the (row, k) of A element i (0..15) of lane.
func MmaA(lane, i int) (row, k int) {
	g, tig := lane/4, lane%4
	row = g
	if (i >= 4 && i < 8) || i >= 12 {
		row = g + 8
	}
	k = 4*tig + i%4
	if i >= 8 {
		k += 16
	}
	return
}

// MmaB returns the (k, col) of B element i (0..7) of lane.
func MmaB(lane, i int) (k, col int) {
	k = 4*(lane%4) + i%4
	if i >= 4 {
		k += 16
	}
	return k, lane / 4
}

// MmaC returns the (row, col) of C/D element i (0..3) of lane.
func MmaC(lane, i int) (row, col int) {
	row = lane / 4
	if i >= 2 {
		row += 8
	}
	return row, 2*(lane%4) + i%2
}

// MmaWarp is one warp's operands: each lane's raw fragment registers.
type MmaWarp struct {
	A [32][4]uint32
	B [32][2]uint32
	C [32][4]int32
}

// MmaOut is one warp's D registers.
type MmaOut [32][4]int32

func (w *MmaWarp) setA(lane, i int, v int8) {
	r, s := i/4, 8*uint(i%4)
	w.A[lane][r] = w.A[lane][r]&^(0xff<<s) | uint32(uint8(v))<<s
}

func (w *MmaWarp) getA(lane, i int) int8 { return int8(w.A[lane][i/4] >> (8 * uint(i%4))) }

func (w *MmaWarp) setB(lane, i int, v int8) {
	r, s := i/4, 8*uint(i%4)
	w.B[lane][r] = w.B[lane][r]&^(0xff<<s) | uint32(uint8(v))<<s
}

func (w *MmaWarp) getB(lane, i int) int8 { return int8(w.B[lane][i/4] >> (8 * uint(i%4))) }

// MmaReference computes D = A·B + C with the documented layout (int32 wrap-around).
func MmaReference(w *MmaWarp) MmaOut {
	var a [16][32]int32
	var b [32][8]int32
	for lane := 0; lane < 32; lane++ {
		for i := 0; i < 16; i++ {
			r, k := MmaA(lane, i)
			a[r][k] = int32(w.getA(lane, i))
		}
		for i := 0; i < 8; i++ {
			k, c := MmaB(lane, i)
			b[k][c] = int32(w.getB(lane, i))
		}
	}
	var d MmaOut
	for lane := 0; lane < 32; lane++ {
		for i := 0; i < 4; i++ {
			r, c := MmaC(lane, i)
			s := w.C[lane][i]
			for k := 0; k < 32; k++ {
				s += a[r][k] * b[k][c]
			}
			d[lane][i] = s
		}
	}
	return d
}

// MmaLayoutExperiments returns the warps of the layout probe, in two parts:
//
//  1. For every A slot s = (lane, i) (512 of them), two warps with A one-hot at s
//     (value 1), C = 0 and B holding in every slot (lane', i') the value lane'+1 (first
//     warp) or i'+1 (second): D is then nonzero exactly in the row of s, and there
//     D[row][j] names the B slot that holds (k of s, column j).
//  2. random random warps (int8 A and B, C within ±2^20) from seed, checked against
//     MmaReference.
func MmaLayoutExperiments(random int, seed uint64) []MmaWarp {
	var ws []MmaWarp
	for lane := 0; lane < 32; lane++ {
		for i := 0; i < 16; i++ {
			for part := 0; part < 2; part++ {
				var w MmaWarp
				w.setA(lane, i, 1)
				for bl := 0; bl < 32; bl++ {
					for bi := 0; bi < 8; bi++ {
						v := bl + 1
						if part == 1 {
							v = bi + 1
						}
						w.setB(bl, bi, int8(v))
					}
				}
				ws = append(ws, w)
			}
		}
	}
	s := seed | 1
	next := func() uint64 { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s }
	for n := 0; n < random; n++ {
		var w MmaWarp
		for lane := 0; lane < 32; lane++ {
			for r := 0; r < 4; r++ {
				w.A[lane][r] = uint32(next())
				w.C[lane][r] = int32(next()%(1<<21)) - 1<<20
			}
			for r := 0; r < 2; r++ {
				w.B[lane][r] = uint32(next())
			}
		}
		ws = append(ws, w)
	}
	return ws
}

// MmaLayoutReport is what CheckMmaLayout found.
type MmaLayoutReport struct {
	OneHotChecked int      // A slots whose one-hot experiments matched the documented layout
	RandomChecked int      // random warps equal to MmaReference
	Problems      []string // up to 20 descriptions of disagreements
	Table         string   // the verified layout, one line per lane and element
}

// OK reports whether every experiment agreed with the documented layout.
func (r *MmaLayoutReport) OK() bool { return len(r.Problems) == 0 }

func (r *MmaLayoutReport) problem(format string, args ...any) {
	if len(r.Problems) < 20 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// CheckMmaLayout checks the device's outputs for MmaLayoutExperiments(random, seed)
// against the documented layout. For each A slot s it requires: D nonzero exactly at
// the 8 D slots whose documented row is s's row; at each of them, the B slot named by
// the two experiments has the documented k of s and the documented column of that D
// slot. Together with the random products this pins the layout down to a consistent
// renaming of rows, columns and k, which no mma computation can observe.
func CheckMmaLayout(ws []MmaWarp, outs []MmaOut, random int) (*MmaLayoutReport, error) {
	if len(ws) != len(outs) || len(ws) != 1024+random {
		return nil, fmt.Errorf("cuda: CheckMmaLayout: %d warps, %d outputs, want %d", len(ws), len(outs), 1024+random)
	}
	rep := &MmaLayoutReport{}
	n := 0
	for lane := 0; lane < 32; lane++ {
		for i := 0; i < 16; i++ {
			dl, di := outs[n], outs[n+1]
			n += 2
			row, k := MmaA(lane, i)
			ok := true
			for dlane := 0; dlane < 32; dlane++ {
				for j := 0; j < 4; j++ {
					drow, dcol := MmaC(dlane, j)
					vl, vi := dl[dlane][j], di[dlane][j]
					if drow != row {
						if vl != 0 || vi != 0 {
							rep.problem("A slot (lane %d, elem %d) row %d: D lane %d elem %d (row %d) = %d/%d, want 0", lane, i, row, dlane, j, drow, vl, vi)
							ok = false
						}
						continue
					}
					if vl < 1 || vl > 32 || vi < 1 || vi > 8 {
						rep.problem("A slot (lane %d, elem %d): D lane %d elem %d = %d/%d, not a B slot id", lane, i, dlane, j, vl, vi)
						ok = false
						continue
					}
					bk, bcol := MmaB(int(vl-1), int(vi-1))
					if bk != k || bcol != dcol {
						rep.problem("A slot (lane %d, elem %d) (row %d, k %d): D lane %d elem %d (col %d) came from B lane %d elem %d (k %d, col %d)",
							lane, i, row, k, dlane, j, dcol, vl-1, vi-1, bk, bcol)
						ok = false
					}
				}
			}
			if ok {
				rep.OneHotChecked++
			}
		}
	}
	for w := 1024; w < len(ws); w++ {
		want := MmaReference(&ws[w])
		if want == outs[w] {
			rep.RandomChecked++
			continue
		}
		for lane := 0; lane < 32; lane++ {
			for j := 0; j < 4; j++ {
				if want[lane][j] != outs[w][lane][j] {
					rep.problem("random warp %d: D lane %d elem %d = %d, documented layout gives %d", w-1024, lane, j, outs[w][lane][j], want[lane][j])
				}
			}
		}
	}
	rep.Table = MmaLayoutTable()
	return rep, nil
}

// MmaLayoutTable prints the documented layout: one line per lane, A (row,k) for
// elements 0..15, B (k,col) for 0..7, C (row,col) for 0..3.
func MmaLayoutTable() string {
	var sb strings.Builder
	sb.WriteString("# mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 fragment layout\n")
	sb.WriteString("# lane | A elem 0..15 as row,k (elem i = byte i%4 of register i/4) | B elem 0..7 as k,col | C/D elem 0..3 as row,col\n")
	for lane := 0; lane < 32; lane++ {
		fmt.Fprintf(&sb, "%2d |", lane)
		for i := 0; i < 16; i++ {
			r, k := MmaA(lane, i)
			fmt.Fprintf(&sb, " %d,%d", r, k)
		}
		sb.WriteString(" |")
		for i := 0; i < 8; i++ {
			k, c := MmaB(lane, i)
			fmt.Fprintf(&sb, " %d,%d", k, c)
		}
		sb.WriteString(" |")
		for i := 0; i < 4; i++ {
			r, c := MmaC(lane, i)
			fmt.Fprintf(&sb, " %d,%d", r, c)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}
