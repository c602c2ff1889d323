package mmvq

import "github.com/ggsim/ggsim/sim/q8"

// rows8Func computes the outputs of eight rows (lanes; a lane may repeat another's row)
// for len(ys) columns that read the same rows: out[j][q] is what output gives for row
// rows[q] and column ys[j], bit for bit. It belongs to one worker (it owns scratch).
type rows8Func func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32)

// rows8Factory makes a worker's rows8Func for a launch.
type rows8Factory func(l *launch) rows8Func
