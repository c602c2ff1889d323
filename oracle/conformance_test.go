package oracle_test

import (
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/sim"
)

// TestConformance runs the conformance suite on the simulator (the front door,
// ggsim.Simulator) for the H200 (the device
// whose GPU results the simulator is checked against): every property but the
// reference comparison, on oracletest.DefaultChecks random cases (GGSIM_CONFORMANCE_CHECKS
// or -rapid.checks for more).
func TestConformance(t *testing.T) {
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	oracletest.Run(t, ggsim.NewSimulator(), dev, oracletest.Options{})
}
