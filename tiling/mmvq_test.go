package tiling

import (
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

func TestMakeMMVQPlan(t *testing.T) {
	h := dev(t, "H200")
	t4 := dev(t, "T4")
	gb10 := sim.Device{Name: "GB10", Vendor: sim.NVIDIA, CC: sim.CCDGXSpark, SMCount: 48, WarpSize: 32}
	mi300 := sim.Device{Name: "MI300X", Vendor: sim.AMD, CC: sim.CCCDNA3, SMCount: 304, WarpSize: 64}
	rdna4 := sim.Device{Name: "RX 9070", Vendor: sim.AMD, CC: sim.CCRDNA4, SMCount: 64, WarpSize: 32}
	tests := []struct {
		dev      sim.Device
		ty       quant.Type
		k, ncols int
		ids      bool
		want     string
	}{
		{h, quant.Q4_K, 1024, 1, false, "mul_mat_vec_q<q4_K, ncols=1, small_k=true, halve_iters=false> table=GENERIC nwarps=4 rows_per_block=4 blocks_per_iter=8"},
		{h, quant.Q4_K, 4096, 1, false, "mul_mat_vec_q<q4_K, ncols=1, small_k=false, halve_iters=false> table=GENERIC nwarps=4 rows_per_block=1 blocks_per_iter=8"},
		{h, quant.Q4_K, 4096, 4, false, "mul_mat_vec_q<q4_K, ncols=4, small_k=false, halve_iters=false> table=GENERIC nwarps=4 rows_per_block=2 blocks_per_iter=8"},
		{h, quant.Q8_0, 4096, 5, false, "mul_mat_vec_q<q8_0, ncols=5, small_k=false, halve_iters=false> table=GENERIC nwarps=2 rows_per_block=2 blocks_per_iter=16"},
		{h, quant.Q6_K, 4096, 3, true, "mul_mat_vec_q_moe<q6_K, ncols=3, small_k=false, halve_iters=false> table=GENERIC nwarps=3 rows_per_block=2 blocks_per_iter=1"},
		{h, quant.Q6_K, 4096, 1, true, "mul_mat_vec_q<q6_K, ncols=1, small_k=false, halve_iters=false> table=GENERIC nwarps=4 rows_per_block=1 blocks_per_iter=4"},
		{t4, quant.Q4_K, 4096, 1, false, "mul_mat_vec_q<q4_K, ncols=1, small_k=false, halve_iters=false> table=TURING nwarps=2 rows_per_block=1 blocks_per_iter=4"},
		{t4, quant.Q4_0, 4096, 1, false, "mul_mat_vec_q<q4_0, ncols=1, small_k=false, halve_iters=false> table=TURING nwarps=4 rows_per_block=1 blocks_per_iter=64"},
		// GB10, q4_K, K = 4096: 16 blocks, 8 per iteration: iters 2, wide 1, idle 0 -> halve.
		{gb10, quant.Q4_K, 4096, 1, false, "mul_mat_vec_q<q4_K, ncols=1, small_k=false, halve_iters=true> table=GB10 nwarps=8 rows_per_block=1 blocks_per_iter=16"},
		// K = 3*2048: 24 blocks: iters 3, wide 2, idle 1: 8 > 4 -> no.
		{gb10, quant.Q4_K, 6144, 1, false, "mul_mat_vec_q<q4_K, ncols=1, small_k=false, halve_iters=false> table=GB10 nwarps=4 rows_per_block=1 blocks_per_iter=8"},
		{gb10, quant.Q4_K, 4096, 1, true, "mul_mat_vec_q<q4_K, ncols=1, small_k=false, halve_iters=false> table=GB10 nwarps=4 rows_per_block=1 blocks_per_iter=8"},
		{mi300, quant.Q4_0, 4096, 1, false, "mul_mat_vec_q<q4_0, ncols=1, small_k=false, halve_iters=false> table=GCN nwarps=2 rows_per_block=1 blocks_per_iter=64"},
		{rdna4, quant.Q4_0, 4096, 1, false, "mul_mat_vec_q<q4_0, ncols=1, small_k=false, halve_iters=false> table=RDNA4 nwarps=8 rows_per_block=1 blocks_per_iter=128"},
		{rdna4, quant.Q3_K, 4096, 2, false, "mul_mat_vec_q<q3_K, ncols=2, small_k=false, halve_iters=false> table=RDNA4 nwarps=1 rows_per_block=1 blocks_per_iter=2"},
	}
	for _, tc := range tests {
		p, err := MakeMMVQPlan(&tc.dev, tc.ty, tc.k, tc.ncols, tc.ids)
		if err != nil {
			t.Errorf("%s %v: %v", tc.dev.Name, tc.ty, err)
			continue
		}
		if p.String() != tc.want {
			t.Errorf("%s %v k=%d ncols=%d ids=%v:\n got %s\nwant %s", tc.dev.Name, tc.ty, tc.k, tc.ncols, tc.ids, p, tc.want)
		}
	}
	if _, err := MakeMMVQPlan(&h, quant.Q4_K, 4096, 9, false); err == nil {
		t.Error("no error for 9 columns")
	}
	if _, err := MakeMMVQPlan(&h, quant.F16, 4096, 1, false); err == nil {
		t.Error("no error for f16")
	}
	if _, err := MakeMMVQPlan(&h, quant.Q4_K, 100, 1, false); err == nil {
		t.Error("no error for k not a multiple of 256")
	}
}

func TestMMVQTablesBeyond8(t *testing.T) {
	if CalcNWarps(quant.Q4_K, 9, TableGeneric, false, false) != 1 || CalcRowsPerBlock(9, TableGeneric, false, 1) != 1 {
		t.Error("calc_nwarps / calc_rows_per_block beyond 8 columns")
	}
}
