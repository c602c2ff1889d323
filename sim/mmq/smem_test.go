package mmq

import (
	"errors"
	"slices"
	"testing"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

func smemDevices(t *testing.T) (mma, dp4a sim.Device) {
	t.Helper()
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	d := dev
	d.NoTuringMMA = true
	return dev, d
}

func smemCheck(t *testing.T, p *Plan, typ quant.Type, opt SmemOptions) *SmemReport {
	t.Helper()
	rep, err := CheckSharedMemory(p, typ, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Every modelled type on both paths, a shape with fallback (N % 128 != 0: the last row
// tile is short), a partial column tile and stream-K tiles split over blocks: no problem,
// and the sanitizer did look (loads and stores counted, the fallback rows seen).
func TestSmemCleanAllTypes(t *testing.T) {
	mma, dp4a := smemDevices(t)
	for _, path := range []struct {
		name string
		dev  sim.Device
		dp4a bool
	}{{"mma", mma, false}, {"dp4a", dp4a, true}} {
		for _, typ := range SmemTypes(path.dp4a) {
			K := 512
			N, M := 200, 20
			p := planFor(t, path.dev, typ, K, N, M)
			if p.DP4A != path.dp4a {
				t.Fatalf("%v %s: plan path dp4a=%v", typ, path.name, p.DP4A)
			}
			rep := smemCheck(t, p, typ, SmemOptions{MaxBlocks: 4})
			if err := rep.Err(); err != nil {
				t.Errorf("%v %s: %v", typ, path.name, err)
				continue
			}
			if rep.Loads == 0 || rep.Stores == 0 || rep.Iterations == 0 {
				t.Errorf("%v %s: nothing replayed: %+v", typ, path.name, rep)
			}
			if rep.DeadUnwritten == 0 {
				t.Errorf("%v %s: N=%d has fallback rows past i_max, but no discarded unwritten load was seen", typ, path.name, N)
			}
		}
	}
}

// A MUL_MAT_ID launch (ids_dst_shared rewritten per tile, reset for the fixup tile) is
// clean too.
func TestSmemCleanID(t *testing.T) {
	mma, dp4a := smemDevices(t)
	ids := make([]int32, 0, 64)
	for tok := 0; tok < 32; tok++ {
		ids = append(ids, int32(tok%4), int32(4+tok%3))
	}
	r, err := moe.Route(ids, 32, 2, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range []sim.Device{mma, dp4a} {
		p, err := MakePlanID(dev, quant.Q4_0, 256, 64, r)
		if err != nil {
			t.Fatal(err)
		}
		rep := smemCheck(t, p, quant.Q4_0, SmemOptions{MaxBlocks: 200})
		if err := rep.Err(); err != nil {
			t.Errorf("dp4a=%v: %v", p.DP4A, err)
		}
	}
}

// Each planted bug is found, with the kind it must produce.
func TestSmemInjectedBugsCaught(t *testing.T) {
	mma, dp4a := smemDevices(t)
	// A wrong row stride shows as overlapping rows (two threads store different values)
	// or, where the rows do not overlap in one interval, as loads of the wrong word.
	stride := []SmemKind{SmemRaceWAW, SmemWrongWord, SmemOutOfRange}
	cases := []struct {
		inj   smemInjection
		kinds []SmemKind
	}{
		{injXRowStride, stride},
		{injNoBarrier, []SmemKind{SmemRaceWAR}},
		{injTileYOffset, []SmemKind{SmemWrongWord}},
		{injYCopyShort, []SmemKind{SmemUnwritten}},
		{injTileXPastEnd, []SmemKind{SmemOutOfRange}},
		{injScaleRowStride, stride},
	}
	for _, dev := range []sim.Device{mma, dp4a} {
		for _, typ := range SmemTypes(dev.NoTuringMMA) {
			p := planFor(t, dev, typ, 256, 128, 16)
			for _, c := range cases {
				rep := smemCheck(t, p, typ, SmemOptions{MaxBlocks: 1, MaxIters: 1, inject: c.inj})
				if !hasKind(rep, c.kinds...) {
					t.Errorf("%v dp4a=%v injection %d: want one of %v, got %d problems, first %v", typ, p.DP4A, c.inj, c.kinds, rep.NProblems, first(rep))
				}
			}
		}
	}
}

// The barrier before rewriting ids_dst_shared for the next tile (stream-K with ids):
// without it the write_back loads of the previous tile race with the stores.
func TestSmemIDsBarrierCaught(t *testing.T) {
	mma, _ := smemDevices(t)
	ids := make([]int32, 0, 80)
	for tok := 0; tok < 40; tok++ {
		ids = append(ids, int32(tok%8), int32((tok+3)%8))
	}
	r, err := moe.Route(ids, 40, 2, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	// 40 row tiles times 8 experts over 132 stream-K blocks: blocks run two or more tiles,
	// and K = 2048 splits tiles between blocks (fixups).
	p, err := MakePlanID(mma, quant.Q8_0, 2048, 5120, r)
	if err != nil {
		t.Fatal(err)
	}
	clean := smemCheck(t, p, quant.Q8_0, SmemOptions{MaxBlocks: 2, MaxIters: 1})
	if err := clean.Err(); err != nil {
		t.Fatal(err)
	}
	rep := smemCheck(t, p, quant.Q8_0, SmemOptions{MaxBlocks: 2, MaxIters: 1, inject: injIDsNoBarrier})
	if !hasKind(rep, SmemRaceWAR) {
		t.Errorf("missing ids barrier: want a WAR race, got %d problems, first %v", rep.NProblems, first(rep))
	}
	// The fixup kernel's static ids_dst_shared: its blocks replayed, clean, and a RAW
	// race without the barrier between the stores and the loads.
	if clean.Fixups == 0 {
		t.Fatalf("no fixup block replayed (%d fixups in the plan)", len(p.Part.Fixups))
	}
	rep = smemCheck(t, p, quant.Q8_0, SmemOptions{MaxBlocks: 2, MaxIters: 1, inject: injFixupNoBarrier})
	if !hasKind(rep, SmemRaceRAW) {
		t.Errorf("missing fixup barrier: want a RAW race, got %d problems, first %v", rep.NProblems, first(rep))
	}
}

func first(rep *SmemReport) error {
	if len(rep.Problems) == 0 {
		return nil
	}
	return rep.Problems[0]
}

func hasKind(rep *SmemReport, kinds ...SmemKind) bool {
	for _, e := range rep.Problems {
		var p *SmemProblem
		if errors.As(e, &p) && slices.Contains(kinds, p.Kind) {
			return true
		}
	}
	return false
}

// Every type with an MMQ kernel is modelled on both paths; a device whose layout is
// not modelled (AMD) is refused by MakePlan, and a plan of another type is an error.
func TestSmemAllTypesModelled(t *testing.T) {
	for _, dp4a := range []bool{false, true} {
		kt := kernels
		if dp4a {
			kt = kernelsDP4A
		}
		for typ := range kt {
			if !slices.Contains(SmemTypes(dp4a), typ) {
				t.Errorf("%v dp4a=%v: simulated but its shared memory is not modelled", typ, dp4a)
			}
		}
	}
	mma, _ := smemDevices(t)
	p := planFor(t, mma, quant.Q4_0, 256, 128, 16)
	if _, err := CheckSharedMemory(p, quant.Q8_0, SmemOptions{}); err == nil {
		t.Error("a q4_0 plan checked as q8_0")
	}
}

// A launch of a few tiles split over many blocks: the sample touches every tile.
func TestSmemPickTouchesEveryTile(t *testing.T) {
	mma, _ := smemDevices(t)
	p := planFor(t, mma, quant.Q4_0, 4096, 768, 16)
	if len(p.Tiles) < 4 || len(p.Part.Blocks) <= 8 {
		t.Fatalf("want a few tiles over many blocks: %d tiles, %d blocks", len(p.Tiles), len(p.Part.Blocks))
	}
	touched := map[int]bool{}
	for _, i := range smemPickBlocks(&p.Part, 8, p.I, 768) {
		for _, s := range p.Part.Blocks[i].Segments {
			touched[s.TileIndex] = true
		}
	}
	if len(touched) != len(p.Tiles) {
		t.Errorf("the sample touches %d of %d tiles", len(touched), len(p.Tiles))
	}
}
