// Package bugs re-injects bugs of ggml's history into the simulator, so that tests can
// show the oracle catches them (oracle/oracletest's history tests, docs/bounds.md).
// Every switch is off unless a test turns it on; the simulator reads each at one site,
// a single atomic load of a bool in a normal run. A test that turns a switch on must
// hold Lock for as long as it is on (Do does both), and must not run in parallel with
// tests of the simulator.
//
//   - StreamKUnaligned, llama.cpp PR 8311 ("CUDA: fix MMQ stream-k rounding if ne00 %
//     128 != 0"): the stream-K boundaries kbc are rounded down to a multiple of
//     blocks_per_iter in the flat kbc space (kbc -= kbc % blocks_per_iter) instead of
//     within the tile (kbc -= (kbc % blocks_per_ne00) % blocks_per_iter), which is the
//     same only when blocks_per_ne00 is a multiple of blocks_per_iter; otherwise a CUDA
//     block starts mid-iteration of its tile and the tile loop reads past its range.
//   - MoEFixupColumns, llama.cpp PR 17089 ("CUDA: fix MMQ stream-k fixup ne1
//     indices"): in MUL_MAT_ID mode mul_mat_q_stream_k_fixup reads the tile's dst
//     columns as ids_dst[col_low + j] instead of ids_dst[col_low + jt*J + j], so the
//     fixup of a split tile with jt > 0 is added to the columns of the expert's first
//     tile (sim/mmq's MulMatID).
package bugs

import (
	"sync"
	"sync/atomic"
)

var (
	// StreamKUnaligned re-injects PR 8311's bug (read by streamk).
	StreamKUnaligned atomic.Bool
	// MoEFixupColumns re-injects PR 17089's bug (read by sim/mmq).
	MoEFixupColumns atomic.Bool
)

var mu sync.Mutex

// Do turns sw on, runs f, and turns it off again, holding the package's lock.
func Do(sw *atomic.Bool, f func()) {
	mu.Lock()
	defer mu.Unlock()
	sw.Store(true)
	defer sw.Store(false)
	f()
}
