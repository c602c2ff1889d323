package tiling

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// The J search (mmq.cuh mul_mat_q_switch_J) against hand-worked examples. The H200 rows
// are those of the reference brief, ../shared/reference/ggml-cuda-kernels.md §5.1: the
// ampere table has J in {8,16,24,32,40,48,64,80,96,112,128} without fallback and
// {8,16,32,64,128} with it, and every entry fits in 227 KiB.
func TestMMQSearchJHandWorked(t *testing.T) {
	h200, p40, t4 := dev(t, "H200"), dev(t, "P40"), dev(t, "T4")
	mi300, rx := dev(t, "MI300X"), dev(t, "RX 7900 XTX")
	cases := []struct {
		dev      sim.Device
		typ      quant.Type
		ncols    int64
		fallback bool
		wantJ    int
		steps    int // iterations of the loop
		why      string
	}{
		{h200, quant.Q4_K, 200, false, 112, 16, "ceil(200/112) = 2 is the minimum; 104 is not a J of the table"},
		{h200, quant.Q4_K, 200, true, 128, 16, "fallback: 64 -> 4 tiles, 128 -> 2"},
		{h200, quant.Q4_K, 9, false, 16, 2, "8 -> 2 tiles, 16 -> 1 tile, loop stops (ntiles_J_best == 1)"},
		{h200, quant.Q4_K, 33, false, 40, 5, "32 -> 2 tiles, 40 -> 1"},
		{h200, quant.Q4_K, 33, true, 64, 8, "fallback: 32 -> 2, 40..56 unavailable, 64 -> 1"},
		{h200, quant.Q4_K, 130, false, 80, 16, "64 -> 3, 80 -> 2; 96..128 also give 2, not fewer"},
		{h200, quant.Q4_K, 130, true, 128, 16, "fallback: 64 -> 3, 128 -> 2"},
		{h200, quant.Q4_K, 1, false, 8, 1, "one column: J = 8 -> 1 tile"},
		// P40: pascal table (cc 6.1), J <= 64; dp4a layout. q4_0 at J=64: ids 256 +
		// x (64*32+64 + 64*32/4+64/4)*4 = 10560 + y 64*144 = 9216 -> 20032 <= 48 KiB.
		{p40, quant.Q4_0, 200, false, 64, 16, "pascal: 40 -> 5, 48 -> 5 (not fewer), 64 -> 4; nothing above 64"},
		// T4: 64 KiB smpbo. q2_K in the MMA layout: x = 128*100*4 = 51200 bytes; J=80:
		// 51200 + 320 + pad(11520, 1024)=12288 -> 63808 fits; J=96: 51200+384+14336 =
		// 65920 > 65536; J=112: 68032; J=128: 70144: skipped.
		{t4, quant.Q2_K, 200, false, 80, 16, "80 -> 3 tiles; 96, 112, 128 exceed smpbo"},
		{t4, quant.Q2_K, 200, true, 64, 16, "fallback: 64 -> 4 tiles; 128 exceeds smpbo"},
		// MI300X: cdna table starts at J = 16 (mmq-config-cdna.cuh:18 for q4_0).
		{mi300, quant.Q4_0, 9, true, 16, 2, "J=8 unavailable, 16 -> 1"},
		// RX 7900 XTX: rdna3 table, q4_0 without fallback has J in {16,32,48,...}.
		{rx, quant.Q4_0, 40, false, 48, 6, "16 -> 3, 32 -> 2, 48 -> 1"},
	}
	for _, c := range cases {
		s := MMQSearchJ(&c.dev, c.typ, c.ncols, c.fallback)
		if s.J != c.wantJ || len(s.Steps) != c.steps {
			t.Errorf("%s %v ncols=%d fallback=%v: J=%d after %d steps, want J=%d after %d (%s)\n%s",
				c.dev.Name, c.typ, c.ncols, c.fallback, s.J, len(s.Steps), c.wantJ, c.steps, c.why, stepsString(s))
		}
	}
}

func stepsString(s JSearch) string {
	var b strings.Builder
	for _, st := range s.Steps {
		fmt.Fprintf(&b, "  J=%d avail=%v smem=%d over=%v ntiles=%d chosen=%v %s\n", st.J, st.Available, st.NBytesShared, st.OverSmpbo, st.NTilesX, st.Chosen, st.Source)
	}
	return b.String()
}

// The steps of one search in detail: T4, q2_K, 200 columns, fallback (J in 8,16,32,64,128).
func TestMMQSearchJSteps(t *testing.T) {
	t4 := dev(t, "T4")
	s := MMQSearchJ(&t4, quant.Q2_K, 200, true)
	var got []string
	for _, st := range s.Steps {
		switch {
		case !st.Available:
			got = append(got, fmt.Sprintf("%d:-", st.J))
		case st.OverSmpbo:
			got = append(got, fmt.Sprintf("%d:over", st.J))
		case st.Chosen:
			got = append(got, fmt.Sprintf("%d:%d*", st.J, st.NTilesX))
		default:
			got = append(got, fmt.Sprintf("%d:%d", st.J, st.NTilesX))
		}
	}
	want := "8:25* 16:13* 24:- 32:7* 40:- 48:- 56:- 64:4* 72:- 80:- 88:- 96:- 104:- 112:- 120:- 128:over"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("steps:\n got %s\nwant %s", g, want)
	}
	if s.Steps[0].Source != "mmq-config-ampere.cuh:123" {
		t.Errorf("J=8 fallback q2_K cites %q, want mmq-config-ampere.cuh:123", s.Steps[0].Source)
	}
}

// mmq_get_nbytes_shared (mmq.cuh) by hand for both data layouts.
func TestMMQNBytesSharedHand(t *testing.T) {
	h200, v100 := dev(t, "H200"), dev(t, "V100")
	noMMA := h200
	noMMA.Name, noMMA.NoTuringMMA, noMMA.Int8MMA = "H200 without int8 MMA", true, false
	if err := noMMA.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dev  sim.Device
		typ  quant.Type
		J    int
		want int
		hand string
	}{
		// MMA layout, Q8_1 sram stride 2*32 + 2*32/QI8_1(8) + 4 = 76.
		{h200, quant.Q4_K, 40, 45216, "40*4 + 128*76*4 (38912) + pad(40*144 = 5760, 256*4) = 6144"},
		// MMA layout, Q6_K stride 64 + 32/QI6_K(32) + 32/8 + 7 = 76.
		{h200, quant.Q6_K, 64, 48384, "64*4 + 128*76*4 (38912) + 64*144 (9216, already a multiple of 1024)"},
		// Q2_K stride 64 + 32 + 4 = 100: the reference brief's "about 70 KB".
		{h200, quant.Q2_K, 128, 70144, "128*4 + 128*100*4 (51200) + 128*144 (18432)"},
		// dp4a layout (V100: ampere table, no turing_mma): MMQ_DP4A_TXS_Q4_0 with I=128:
		// qs 128*32+128 = 4224, dm 128*32/4 + 128/4 = 1056.
		{v100, quant.Q4_0, 64, 30592, "64*4 + (4224+1056)*4 (21120) + 9216"},
		// The same H200 with NoTuringMMA: dp4a MMQ_DP4A_TXS_Q4_K: qs 4224, dm 128*32/32 =
		// 128, sc 128*32/8 + 128/8 = 528.
		{noMMA, quant.Q4_K, 40, 25824, "40*4 + (4224+128+528)*4 (19520) + 6144"},
	}
	for _, c := range cases {
		cfg, ok := MMQConfigOf(&c.dev, c.typ, c.J, false)
		if !ok {
			t.Errorf("%s %v J=%d: no config", c.dev.Name, c.typ, c.J)
			continue
		}
		if got := MMQNBytesShared(cfg); got != c.want {
			t.Errorf("%s %v J=%d: %d bytes, want %d = %s", c.dev.Name, c.typ, c.J, got, c.want, c.hand)
		}
	}
}

// Table selection (ggml_cuda_mmq_get_config, host) and the citing of rows.
func TestMMQArchAndConfig(t *testing.T) {
	want := map[string]MMQArch{
		"H200": MMQArchAmpere, "H100 SXM": MMQArchAmpere, "A100": MMQArchAmpere, "RTX 4090": MMQArchAmpere,
		"T4": MMQArchAmpere, "V100": MMQArchAmpere, "P100": MMQArchPascal, "P40": MMQArchPascal,
		"RTX 5090": MMQArchBlackwell, "MI300X": MMQArchCDNA, "RX 7900 XTX": MMQArchRDNA3,
	}
	for _, d := range sim.Catalog() {
		if w, ok := want[d.Name]; ok && MMQArchOf(&d) != w {
			t.Errorf("%s: table %v, want %v", d.Name, MMQArchOf(&d), w)
		}
	}
	// An sm_90 device built only for sm_61: pascal table.
	old := dev(t, "H200")
	old.ArchList = []int{610}
	if MMQArchOf(&old) != MMQArchPascal {
		t.Errorf("H200 built for 610 only: %v, want pascal", MMQArchOf(&old))
	}
	h200, rtx5090 := dev(t, "H200"), dev(t, "RTX 5090")
	cfg, ok := MMQConfigOf(&h200, quant.Q4_0, 8, true)
	if !ok || cfg.Source != "mmq-config-ampere.cuh:36" || cfg.NThreads != 256 || cfg.I != 128 || !cfg.StreamK || !cfg.UseMMADataLayout || cfg.SRAM != SRAMQ8_0 {
		t.Errorf("H200 q4_0 J=8 fallback: %+v", cfg)
	}
	// Blackwell: MXFP4 from its own table (K_vram 512, FP4 layout), q4_0 from ampere.
	cfg, ok = MMQConfigOf(&rtx5090, quant.MXFP4, 8, true)
	if !ok || cfg.Source != "mmq-config-blackwell.cuh:2" || cfg.KVRAM != MMQIterKFP4 || cfg.SRAM != SRAMFP4 {
		t.Errorf("5090 mxfp4 J=8 fallback: %+v", cfg)
	}
	cfg, ok = MMQConfigOf(&rtx5090, quant.Q4_0, 8, true)
	if !ok || cfg.Arch != MMQArchAmpere || cfg.Source != "mmq-config-ampere.cuh:36" {
		t.Errorf("5090 q4_0 J=8 fallback: %+v", cfg)
	}
	if _, ok := MMQConfigOf(&h200, quant.IQ1_M, 8, false); ok {
		t.Error("iq1_M has an MMQ config")
	}
	if _, ok := MMQConfigOf(&h200, quant.Q4_0, 24, true); ok {
		t.Error("ampere q4_0 has J=24 with fallback")
	}
	// The strides of ggml_cuda_mmq_get_sram_stride all satisfy its static_asserts.
	for l := SRAMQ8_0; l <= SRAMNVFP4; l++ {
		if l.Stride()%8 != 4 {
			t.Errorf("%v stride %d %% 8 != 4", l, l.Stride())
		}
	}
	if SRAMFP4.Stride() != SRAMQ8_1.Stride() {
		t.Error("FP4 and Q8_1 strides differ (mmq.cuh static_assert)")
	}
}

// Every row of every table satisfies the CASE macro's static_asserts and the types
// have MMQ.
func TestMMQRowsWellFormed(t *testing.T) {
	n := 0
	for arch, rows := range mmqConfigRows {
		for _, r := range rows {
			n++
			if r.nthreads%32 != 0 || r.nthreads > 512 || r.occupancy > 8 || r.i%32 != 0 || r.j%8 != 0 || r.kvram%256 != 0 || !mmqTypes[r.typ] {
				t.Errorf("%s:%d: %+v", arch.File(), r.line, r)
			}
		}
	}
	if n != 1802 { // grep -c 'CASE(GGML' mmq-config-*.cuh at d99724f2b141
		t.Errorf("%d rows, want 1802", n)
	}
}

// MakeMMQPlan: fallback from ne01, tile counts, MUL_MAT_ID channels.
func TestMakeMMQPlan(t *testing.T) {
	h200 := dev(t, "H200")
	p, err := MakeMMQPlan(&h200, quant.Q4_K, Shape{K: 4096, N: 4096, M: 33})
	if err != nil {
		t.Fatal(err)
	}
	want := "mul_mat_q<q4_K, J=40, fallback=false> (mmq-config-ampere.cuh:166) nthreads=256 occupancy=1 I=128 sram=Q8_1 K_vram=256 stream_k=true mma_layout=true smem=45216 nty=32 ntx=1 ntzw=1 ntiles=32 blocks_per_ne00=16 blocks_per_iter=1"
	if p.String() != want {
		t.Errorf("\n got %s\nwant %s", p, want)
	}
	// 4000 rows: fallback; 200 tokens of 128 experts: J=128, ntx=2, nty=32, ntzw=128.
	p, err = MakeMMQPlan(&h200, quant.Q8_0, Shape{K: 2048, N: 4000, M: 200, Experts: 128})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Config.Fallback || p.Config.J != 128 || p.NTX != 2 || p.NTY != 32 || p.NTZW != 128 || p.NTiles != 2*32*128 ||
		p.BlocksPerNe00 != 64 || p.BlocksPerIter != 8 || p.NWarps != 8 {
		t.Errorf("q8_0 MUL_MAT_ID plan: %v", p)
	}
	if _, err := MakeMMQPlan(&h200, quant.IQ1_M, Shape{K: 256, N: 128, M: 16}); err == nil {
		t.Error("no error for iq1_M")
	}
	if _, err := MakeMMQPlan(&h200, quant.Q4_K, Shape{K: 100, N: 128, M: 16}); err == nil {
		t.Error("no error for K not a multiple of 256")
	}
	tiny := h200
	tiny.SmemPerBlockOptin = 16 * 1024
	if _, err := MakeMMQPlan(&tiny, quant.Q4_K, Shape{K: 256, N: 128, M: 16}); err == nil {
		t.Error("no error when no config fits the shared memory")
	}
}

// A hand-written "cc 9.0 without int8 MMA" (NoTuringMMA): dp4a layout, and
// ggml_cuda_should_use_mmq takes the NVIDIA rule !fp16_mma_hardware_available(900) ||
// ne11 < MMQ_DP4A_MAX_BATCH_SIZE (mmq.cu).
func TestNoTuringMMA(t *testing.T) {
	d := dev(t, "H200")
	d.Name, d.NoTuringMMA, d.Int8MMA = "sm_90 without int8 MMA", true, false
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if UseMMADataLayout(&d) || MMQArchOf(&d) != MMQArchAmpere {
		t.Error("NoTuringMMA: want the ampere table in the dp4a layout")
	}
	if !ShouldUseMMQ(d, quant.Q4_K, 63, 0) || ShouldUseMMQ(d, quant.Q4_K, 64, 0) {
		t.Error("NoTuringMMA: should_use_mmq must switch at 64 columns")
	}
	if got := MulMat(d, quant.Q4_K, sq(64)).Kernel; got != KernelCuBLAS {
		t.Errorf("NoTuringMMA, 64 columns: %v, want cublas", got)
	}
	bad := d
	bad.Int8MMA = true
	if bad.Validate() == nil {
		t.Error("Validate accepts Int8MMA with NoTuringMMA")
	}
	amd := dev(t, "MI300X")
	amd.NoTuringMMA = true
	if amd.Validate() == nil {
		t.Error("Validate accepts NoTuringMMA on AMD")
	}
}
