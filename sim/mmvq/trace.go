package mmvq

import (
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// trace runs the launch lane by lane (Options.Trace): for every CUDA block in grid order
// (blockIdx.y = channel, blockIdx.x = row block), every warp and lane accumulates its
// partial sums of the block's rows and columns; warps 1.. store theirs to a simulated
// shared memory, warp 0 loads and adds them in warp order after the barrier, and the xor
// butterfly is done with sim.Warp shuffles. Rows past the last row are not computed (the
// kernel computes them from out-of-bounds reads and does not store them).
func (l *launch) trace(out []float32, opt *Options) {
	p := l.plan
	watch := opt.Watch
	ctr := opt.Counters
	emit := func(e Event) {
		if watch != nil {
			watch(e)
		}
	}
	rpb := p.RowsPerBlock
	nbx := (l.nrows + rpb - 1) / rpb
	tpb := p.QI / p.VDR
	ybl := p.QK / 32
	moe := p.Kernel == tiling.KernelMMVQMoE
	nw := p.NWarps // warps per CUDA block (tokens for the MoE kernel)
	ncols := l.ncols
	if moe {
		ncols = 1 // each warp handles one token
	}
	for c := 0; c < l.nchan; c++ {
		for bx := 0; bx < nbx; bx++ {
			row0 := bx * rpb
			// tmp[w][lane][j][i]
			tmp := make([][32][][]float32, nw)
			for w := range tmp {
				for lane := range tmp[w] {
					tmp[w][lane] = make([][]float32, ncols)
					for j := range tmp[w][lane] {
						tmp[w][lane][j] = make([]float32, rpb)
					}
				}
			}
			for w := 0; w < nw; w++ {
				for lane := 0; lane < 32; lane++ {
					tid := 32*w + lane
					if moe {
						tid = lane
					}
					kqs := p.VDR * (tid % tpb)
					for kbx := tid / tpb; kbx < l.nblocks; kbx += p.BlocksPerIter {
						for j := 0; j < ncols; j++ {
							col := j
							if moe {
								col = w
							}
							y := l.y(c, col)
							for i := 0; i < rpb; i++ {
								row := row0 + i
								if row >= l.nrows {
									continue
								}
								in := tmp[w][lane][j][i]
								o := l.dot(in, l.rowOf(c, col, row), kbx, kqs, y[kbx*ybl:])
								tmp[w][lane][j][i] = o
								emit(Event{Kind: EvVecDot, Row: row, Col: col, Slot: l.slot(c), BlockX: bx, Warp: w, Lane: lane,
									Block: kbx, Iqs: kqs, In: in, Out: o})
							}
						}
					}
				}
			}
			if moe {
				for w := 0; w < nw; w++ {
					for i := 0; i < rpb; i++ {
						if row0+i >= l.nrows {
							continue
						}
						var reg sim.Warp
						for lane := range reg {
							reg[lane] = tmp[w][lane][0][i]
						}
						v := l.butterfly(&reg, row0+i, w, c, bx, w, ctr, emit)
						out[l.dst(c, w, row0+i)] = v
						emit(Event{Kind: EvStore, Row: row0 + i, Col: w, Slot: l.slot(c), BlockX: bx, Warp: w, Lane: i, Out: v})
						ctr.Inc(sim.OpSTG, 1)
					}
				}
				continue
			}
			// Shared memory tmp_shared[nwarps-1][ncols][rpb][32].
			words := (nw - 1) * ncols * rpb * 32
			if words == 0 {
				words = 1
			}
			sh := sim.NewSharedMem(words)
			idx := func(w, j, i, lane int) int { return (((w-1)*ncols+j)*rpb+i)*32 + lane }
			for w := 1; w < nw; w++ {
				for lane := 0; lane < 32; lane++ {
					for j := 0; j < ncols; j++ {
						for i := 0; i < rpb; i++ {
							if row0+i >= l.nrows {
								continue
							}
							sh.StoreF32(32*w+lane, idx(w, j, i, lane), tmp[w][lane][j][i])
							ctr.Inc(sim.OpSTS, 1)
						}
					}
				}
			}
			sh.Sync()
			ctr.Inc(sim.OpBAR, 1)
			for j := 0; j < ncols; j++ {
				for i := 0; i < rpb; i++ {
					row := row0 + i
					if row >= l.nrows {
						continue
					}
					var reg sim.Warp
					for lane := 0; lane < 32; lane++ {
						v := tmp[0][lane][j][i]
						for w := 1; w < nw; w++ {
							a := sh.LoadF32(lane, idx(w, j, i, lane))
							ctr.Inc(sim.OpLDS, 1)
							o := sim.Add(v, a)
							ctr.Inc(sim.OpFADD, 1)
							emit(Event{Kind: EvCrossWarp, Row: row, Col: j, Slot: l.slot(c), BlockX: bx, Lane: lane,
								Offset: w, In: v, Addend: a, Out: o})
							v = o
						}
						reg[lane] = v
					}
					v := l.butterfly(&reg, row, j, c, bx, 0, ctr, emit)
					out[l.dst(c, j, row)] = v
					emit(Event{Kind: EvStore, Row: row, Col: j, Slot: l.slot(c), BlockX: bx, Lane: i, Out: v})
					ctr.Inc(sim.OpSTG, 1)
				}
			}
			if err := sh.Err(); err != nil {
				panic("mmvq: trace: shared memory: " + err.Error())
			}
		}
	}
}

// butterfly performs warp_reduce_sum<32> on reg with sim.Warp shuffles, emitting one
// event per lane and step, and returns lane 0's result after checking that every lane
// holds the same bits.
func (l *launch) butterfly(reg *sim.Warp, row, col, c, bx, warp int, ctr *sim.Counters, emit func(Event)) float32 {
	for off := 16; off > 0; off >>= 1 {
		t := reg.ShflXor(off, 32, ctr)
		for lane := range reg {
			o := sim.Add(reg[lane], t[lane])
			emit(Event{Kind: EvShuffle, Row: row, Col: col, Slot: l.slot(c), BlockX: bx, Warp: warp, Lane: lane,
				Offset: off, In: reg[lane], Addend: t[lane], Out: o})
			reg[lane] = o
		}
		ctr.Inc(sim.OpFADD, 32)
	}
	for lane := range reg {
		if f32bits(reg[lane]) != f32bits(reg[0]) {
			panic("mmvq: trace: lanes disagree after the butterfly")
		}
	}
	return reg[0]
}
