package oracletest_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

func checkPower(t *testing.T, rows []oracletest.PowerRow, minPercent int) {
	t.Helper()
	for _, r := range rows {
		t.Logf("%-15v %-7v %-8s caught %d/%d cases, %d/%d outputs; false alarms %d of %d", r.Bug, r.Type, r.Path, r.Caught, r.Cases, r.OutputsCaught, r.Outputs, r.FalseAlarms, r.CorrectOutputs)
		if r.FalseAlarms > 0 {
			t.Errorf("%v %v %s: %d correct outputs outside the bound", r.Bug, r.Type, r.Path, r.FalseAlarms)
		}
		if 100*r.Caught < minPercent*r.Cases {
			t.Errorf("%v %v %s: caught in %d of %d cases, want >= %d%%", r.Bug, r.Type, r.Path, r.Caught, r.Cases, minPercent)
		}
	}
}

// TestPowerSmall: each injected bug is caught in every one of a few K = 4096 cases of
// two types on both paths of the H200, with no false alarm (simrun bounds --study
// power runs the full table).
func TestPowerSmall(t *testing.T) {
	h200, _ := sim.Lookup("H200")
	rows, err := oracletest.Power(ggsim.NewSimulator(), h200, oracletest.StudyOptions{Types: []quant.Type{quant.Q4_K, quant.Q4_0}, Cases: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 18 { // q4_K: 4 MMVQ + 6 MMQ bugs; q4_0 (no min): 3 + 5
		t.Errorf("%d rows, want 18", len(rows))
	}
	checkPower(t, rows, 100)
}

// TestTightnessSmall: no output of the data kinds outside the bound, and the bound is
// a small multiple of the observed error.
func TestTightnessSmall(t *testing.T) {
	h200, _ := sim.Lookup("H200")
	rows, err := oracletest.Tightness(ggsim.NewSimulator(), h200, oracletest.StudyOptions{Types: []quant.Type{quant.Q5_1, quant.Q2_K}, K: 1024, Cases: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		t.Logf("%v %s %s: %d outputs, bound/err median %.3g worst %.3g, bound/|value| %.2g", r.Type, r.Path, r.Data, r.Outputs, r.Median, r.Worst, r.RelBound)
		if r.Outside > 0 || r.Worst < 1 { // (NaN: every output exact)
			t.Errorf("%v %s %s: %d outputs outside the bound (worst bound/err %v)", r.Type, r.Path, r.Data, r.Outside, r.Worst)
		}
	}
}

// TestFalseAlarmsSmall: 300 generated correct cases (MMVQ and MMQ, every data kind),
// none outside the bound.
func TestFalseAlarmsSmall(t *testing.T) {
	for _, name := range []string{"H200", "RTX 5090"} {
		dev, _ := sim.Lookup(name)
		rep, err := oracletest.FalseAlarms(ggsim.NewSimulator(), dev, 150, oracletest.StudyOptions{K: 512, Seed: 42})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d cases %v, %d outputs, %d outside", name, rep.Cases, rep.PerPath, rep.Outputs, rep.Outside)
		if rep.Outside > 0 {
			t.Errorf("%s: %d correct outputs outside the bound; first: %s", name, rep.Outside, rep.First)
		}
	}
}

// TestBoundStudyLong is the long run, off by default: GGSIM_BOUND_CASES=N runs the power
// study with N cases per type, path and bug (every type, K = 4096, the H200 and its
// dp4a build) and wants >= 99% caught and no false alarm; GGSIM_BOUND_FALSE_ALARMS=N
// runs N generated correct cases. simrun bounds runs the same from the command line.
func TestBoundStudyLong(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GGSIM_BOUND_CASES"))
	fa, _ := strconv.Atoi(os.Getenv("GGSIM_BOUND_FALSE_ALARMS"))
	if n <= 0 && fa <= 0 {
		t.Skip("set GGSIM_BOUND_CASES and/or GGSIM_BOUND_FALSE_ALARMS for the long bound study")
	}
	h200, _ := sim.Lookup("H200")
	dp := h200
	dp.NoTuringMMA = true
	for _, dev := range []sim.Device{h200, dp} {
		if n > 0 {
			rows, err := oracletest.Power(ggsim.NewSimulator(), dev, oracletest.StudyOptions{Cases: n, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			checkPower(t, rows, 99)
		}
		if fa > 0 {
			rep, err := oracletest.FalseAlarms(ggsim.NewSimulator(), dev, fa, oracletest.StudyOptions{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d cases %v, %d outputs, %d outside", dev.Name, rep.Cases, rep.PerPath, rep.Outputs, rep.Outside)
			if rep.Outside > 0 {
				t.Errorf("%d correct outputs outside the bound; first: %s", rep.Outside, rep.First)
			}
		}
	}
}
