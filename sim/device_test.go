package sim

import (
	"strings"
	"testing"
)

func TestCatalogValid(t *testing.T) {
	want := []string{"H200", "H100 SXM", "A100", "RTX 4090", "RTX 3090", "T4", "V100", "P100", "P40", "RTX 5090", "MI300X", "RX 7900 XTX"}
	cat := Catalog()
	for _, name := range want {
		d, err := Lookup(name)
		if err != nil {
			t.Errorf("Lookup(%q): %v", name, err)
			continue
		}
		if err := d.Validate(); err != nil {
			t.Errorf("catalog entry invalid: %v", err)
		}
	}
	for _, d := range cat {
		if err := d.Validate(); err != nil {
			t.Errorf("%v", err)
		}
	}
	cat[0].Name = "changed" // Catalog returns a copy
	if d, _ := Lookup("H200"); d.Name != "H200" {
		t.Fatal("Catalog shares storage with the catalog")
	}
}

func TestLookup(t *testing.T) {
	for _, n := range []string{"h200", "rtx4090", "RTX-4090", "rtx_3090", "H100", "mi300x", "rx 7900 xtx"} {
		if _, err := Lookup(n); err != nil {
			t.Errorf("Lookup(%q): %v", n, err)
		}
	}
	_, err := Lookup("GTX 480")
	if err == nil || !strings.Contains(err.Error(), "H200") {
		t.Fatalf("Lookup of an unknown name: %v", err)
	}
}

// TestCatalogFigures pins the figures the kernels depend on (ggml's cc and nsm, smpbo).
func TestCatalogFigures(t *testing.T) {
	cases := []struct {
		name            string
		cc, nsm, smpbo  int
		warp            int
		dp4a, mma, fp16 bool
	}{
		{"H200", 900, 132, 232448, 32, true, true, true},
		{"H100 SXM", 900, 132, 232448, 32, true, true, true},
		{"A100", 800, 108, 166912, 32, true, true, true},
		{"RTX 4090", 890, 128, 101376, 32, true, true, true},
		{"RTX 3090", 860, 82, 101376, 32, true, true, true},
		{"T4", 750, 40, 65536, 32, true, true, true},
		{"V100", 700, 80, 98304, 32, true, false, true},
		{"P100", 600, 56, 49152, 32, false, false, true},
		{"P40", 610, 30, 49152, 32, true, false, false},
		{"RTX 5090", 1200, 170, 101376, 32, true, true, true},
		{"MI300X", 0x1000942, 304, 65536, 64, true, true, true},
		{"RX 7900 XTX", 0x1001100, 96, 65536, 32, true, true, true},
	}
	for _, c := range cases {
		d, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if d.CC != c.cc || d.SMCount != c.nsm || d.SmemPerBlockOptin != c.smpbo || d.WarpSize != c.warp ||
			d.DP4A != c.dp4a || d.Int8MMA != c.mma || d.FastFP16 != c.fp16 {
			t.Errorf("%s: %+v", c.name, d)
		}
	}
}

func TestCCPredicates(t *testing.T) {
	h200, _ := Lookup("H200")
	if !h200.TuringMMA() || !h200.AmpereMMA() || h200.VoltaMMA() || h200.BlackwellMMA() || h200.AMDMFMA() || !h200.FP16MMA() {
		t.Error("H200 predicates")
	}
	v100, _ := Lookup("V100")
	if !v100.VoltaMMA() || v100.TuringMMA() {
		t.Error("V100 predicates")
	}
	mi, _ := Lookup("MI300X")
	if !CCIsCDNA3(mi.CC) || !mi.AMDMFMA() || mi.AMDWMMA() || mi.TuringMMA() || !CCIsAMD(mi.CC) || CCIsNVIDIA(mi.CC) {
		t.Error("MI300X predicates")
	}
	rx, _ := Lookup("RX 7900 XTX")
	if !CCIsRDNA3(rx.CC) || !CCIsRDNA3_0(rx.CC) || !rx.AMDWMMA() || rx.AMDMFMA() || !CCIsRDNA(rx.CC) {
		t.Error("RX 7900 XTX predicates")
	}
	b, _ := Lookup("RTX 5090")
	if !b.BlackwellMMA() || !BlackwellMMAAvailable(CCDGXSpark, CCDGXSpark) || BlackwellMMAAvailable(CCRubin, CCRubin) {
		t.Error("Blackwell predicates")
	}
	if !CCIsGCN(CCVega20) || CCIsCDNA(CCVega20) || !HasDP4A(CCVega20) || HasDP4A(CCVega) || HasDP4A(CCRDNA1) || !HasDP4A(CCRDNA2) {
		t.Error("GCN/RDNA predicates")
	}
	if !CCIsMThreads(CCQY2) || CCIsNVIDIA(CCQY2) || CCIsAMD(CCQY2) || !FP16Available(CCPH1, CCPH1) || !FastFP16Available(CCQY1, CCQY1) {
		t.Error("Moore Threads predicates")
	}
	if !FastFP16HardwareAvailable(600) || FastFP16HardwareAvailable(610) || !FP16MMAHardwareAvailable(700) ||
		FP16MMAHardwareAvailable(610) || !BF16MMAHardwareAvailable(CCRDNA4) || !FP32MMAHardwareAvailable(CCCDNA2) {
		t.Error("hardware predicates")
	}
}

func TestHighestCompiledArch(t *testing.T) {
	archs := []int{610, 700, 750, 800, 860, 890}
	cases := []struct{ cc, want int }{{900, 890}, {860, 860}, {870, 860}, {610, 610}, {600, -1}, {1200, 890}}
	for _, c := range cases {
		if got := HighestCompiledArch(c.cc, archs); got != c.want {
			t.Errorf("HighestCompiledArch(%d) = %d, want %d", c.cc, got, c.want)
		}
	}
	if HighestCompiledArch(900, nil) != 900 {
		t.Error("native build")
	}
	// H200 running a build compiled only up to 750: Turing MMA yes, Ampere no
	d, _ := Lookup("H200")
	d.ArchList = []int{610, 750}
	if !d.TuringMMA() || d.AmpereMMA() {
		t.Error("arch-list predicates")
	}
	if err := d.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	d.ArchList = []int{610}
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "Int8MMA") {
		t.Errorf("Validate with a 6.1-only build: %v", err)
	}
}

func TestCCFromGfx(t *testing.T) {
	cases := []struct {
		name string
		cc   int
	}{
		{"gfx942", CCCDNA3}, {"gfx942:sramecc+:xnack-", CCCDNA3}, {"gfx1100", CCRDNA3}, {"gfx906", CCVega20},
		{"gfx90a", CCCDNA2}, {"gfx908", CCCDNA1}, {"gfx1030", CCRDNA2}, {"gfx1201", CCRDNA4 + 1},
		{"gfx11-generic", CCRDNA3}, {"gfx10-3-generic", CCRDNA2}, {"gfx9-4-generic", CCOffsetAMD + 0x940},
		{"gfx803", CCGCN4}, {"gfx1151", CCRDNA3_5 + 1},
	}
	for _, c := range cases {
		got, err := CCFromGfx(c.name)
		if err != nil || got != c.cc {
			t.Errorf("CCFromGfx(%q) = %#x, %v; want %#x", c.name, got, err, c.cc)
		}
	}
	for _, bad := range []string{"", "gfx", "sm_90", "gfx9z2", "gfx123456789", "gfx042", "gfx00"} {
		if _, err := CCFromGfx(bad); err == nil {
			t.Errorf("CCFromGfx(%q) gave no error", bad)
		}
	}
}

func TestValidateFindsProblems(t *testing.T) {
	good, _ := Lookup("RTX 4090")
	cases := []struct {
		mutate func(d *Device)
		want   string
	}{
		{func(d *Device) { d.CC = 89 }, "100*major"},
		{func(d *Device) { d.Name = "" }, "empty Name"},
		{func(d *Device) { d.Vendor = "Intel" }, "Vendor"},
		{func(d *Device) { d.SMCount = 0 }, "SMCount"},
		{func(d *Device) { d.WarpSize = 64 }, "WarpSize"},
		{func(d *Device) { d.SmemPerBlockOptin = 1024 }, "SmemPerBlockOptin"},
		{func(d *Device) { d.SmemPerBlock = 0 }, "SmemPerBlock"},
		{func(d *Device) { d.DP4A = false }, "DP4A"},
		{func(d *Device) { d.Int8MMA = false }, "Int8MMA"},
		{func(d *Device) { d.FastFP16 = false }, "FastFP16"},
		{func(d *Device) { d.Source = " " }, "Source"},
		{func(d *Device) { d.ArchList = []int{75} }, "ArchList"},
		{func(d *Device) { d.Vendor = AMD }, "AMD CC"},
	}
	for _, c := range cases {
		d := good
		c.mutate(&d)
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error mentioning %q, got %v", c.want, err)
		}
	}
	mi, _ := Lookup("MI300X")
	mi.WarpSize = 32
	if err := mi.Validate(); err == nil || !strings.Contains(err.Error(), "WarpSize 64") {
		t.Errorf("MI300X with warp 32: %v", err)
	}
	// a hand-written device
	hand := Device{Name: "my L40S", Vendor: NVIDIA, CC: 890, SMCount: 142, WarpSize: 32,
		SmemPerBlock: 48 << 10, SmemPerBlockOptin: 99 << 10, DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "nvidia-smi on my machine"}
	if err := hand.Validate(); err != nil {
		t.Errorf("hand-written device: %v", err)
	}
}

// NoTuringMMA: an sm_90 device whose ggml build has turing_mma_available false.
func TestNoTuringMMA(t *testing.T) {
	d, _ := Lookup("H200")
	d.NoTuringMMA = true
	if d.TuringMMA() || d.HasInt8MMA() || !d.AmpereMMA() {
		t.Error("NoTuringMMA predicates")
	}
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "Int8MMA") {
		t.Errorf("Validate with Int8MMA still true: %v", err)
	}
	d.Int8MMA = false
	if err := d.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	a, _ := Lookup("MI300X")
	a.NoTuringMMA = true
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "NoTuringMMA") {
		t.Errorf("Validate of an AMD device with NoTuringMMA: %v", err)
	}
}
