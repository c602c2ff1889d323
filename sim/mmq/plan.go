package mmq

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// MakePlan is a provisional port of mul_mat_q_switch_J and launch_mul_mat_q for NVIDIA
// devices on the ampere config table (every type: I = 128, K_vram = 256, stream-K).
func MakePlan(dev sim.Device, t quant.Type, K, N, M int) (*Plan, error) {
	if _, ok := kernels[t]; !ok {
		return nil, fmt.Errorf("%w: no MMQ kernel for %v", ErrUnsupported, t)
	}
	qk := t.BlockSize()
	fallback := N%128 != 0
	js := []int{8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128}
	if fallback {
		js = []int{8, 16, 32, 64, 128}
	}
	jBest, best := 0, 1<<30
	for _, j := range js {
		if best <= 1 {
			break
		}
		if n := (M + j - 1) / j; n < best {
			jBest, best = j, n
		}
	}
	p := &Plan{I: 128, J: jBest, BPN: K / qk, BPI: iterK / qk}
	p.NTX = (M + p.J - 1) / p.J
	p.NTY = (N + p.I - 1) / p.I
	ntiles := p.NTX * p.NTY
	nsm := dev.SMCount
	waves := (ntiles + nsm - 1) / nsm
	eff := 100 * ntiles / (nsm * waves)
	grid := nsm
	if eff >= 90 {
		grid = ntiles
	}
	total := int64(ntiles) * int64(p.BPN)
	p.Tiles = make([][]Range, ntiles)
	kbcOf := func(b int) int64 {
		k := int64(b) * total / int64(grid)
		return k - (k%int64(p.BPN))%int64(p.BPI)
	}
	for b := 0; b < grid; b++ {
		kbc, stop := kbcOf(b), kbcOf(b+1)
		for kbc < stop {
			tile := int(kbc / int64(p.BPN))
			start := int(kbc % int64(p.BPN))
			end := min(int64(p.BPN), int64(start)+stop-kbc)
			p.Tiles[tile] = append(p.Tiles[tile], Range{Start: start, Stop: int(end), Block: b})
			kbc += int64(p.BPN)
			kbc -= kbc % int64(p.BPN)
		}
	}
	return p, nil
}
