//go:build cuda && cgo

package ggml

// The conformance suite (oracle/oracletest) on a real ggml build.
//   GGSIM_GGML_DIR=DIR                 the build's library directory (else: skip, not a pass)
//   GGSIM_CONFORMANCE_CHECKS=N         random cases of the CUDA run (default oracletest.DefaultChecks)
//   GGSIM_CONFORMANCE_CPU_CHECKS=N     random cases of the CPU smoke run (default 100)
//   -rapid.seed=S                      replay a run
//   GGSIM_GPU_OUT=DIR                  the summary is appended to DIR/ggml-backend.txt

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// TestConformanceCUDA runs the conformance suite on CUDA device 0 with the simulator as
// the reference: every output of the GPU must have the simulator's bits, on top of
// every property of the suite. The simulated device is the catalog's entry for the GPU
// the driver reports, with its SM count.
func TestConformanceCUDA(t *testing.T) {
	be := cudaBackend(t)
	info, err := be.Info()
	if err != nil {
		t.Fatal(err)
	}
	dev, err := oracle.DeviceOf(golden.Meta{Device: golden.Device{Name: info.Name, CC: info.CC, SMCount: info.SMCount, Driver: info.Driver}})
	if err != nil {
		t.Fatalf("no simulated device for %s (cc %d): %v", info.Name, info.CC, err)
	}
	report(t, "CUDA backend %q on %s (cc %d, %d SMs, driver %s), ggml %s; simulated device %s",
		info.Backend, info.Name, info.CC, info.SMCount, info.Driver, info.GGMLVersion, dev.Name)
	rep := oracletest.Run(t, be.Impl(), dev, oracletest.Options{Reference: ggsim.NewSimulator()})
	if rep == nil {
		return
	}
	for _, line := range strings.Split(rep.String(), "\n") {
		report(t, "%s", strings.TrimSpace(line))
	}
	report(t, "conformance: %d cases (MUL_MAT on MMVQ %d, MUL_MAT_ID on MMVQ %d, MUL_MAT on MMQ %d, MUL_MAT_ID on MMQ %d: routing %s), %d bit-exact with ggsim, %d outputs compared, rapid seed %d",
		rep.Cases, rep.MulMat, rep.MulMatID, rep.MMQ, rep.MMQID, rep.RoutingCounts(), rep.BitExact, rep.Outputs, rep.Seed)
	if rep.Cases != rep.Requested || rep.BitExact != rep.Cases {
		t.Errorf("%d cases requested, %d ran to the end, %d bit-exact", rep.Requested, rep.Cases, rep.BitExact)
	}
}

// TestConformanceCPU is a smoke test of the suite on ggml's CPU backend: it quantizes the
// activations its own way (q8_0, q8_K), so no bits are compared with the simulator; only
// determinism and that NaN/±Inf inputs never make a call fail are checked.
func TestConformanceCPU(t *testing.T) {
	l := ggmlLib(t)
	be, err := l.NewBackend(BackendSpec{Kind: CPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	dev, err := sim.Lookup("H200") // decides only what ggml would dispatch to MMVQ
	if err != nil {
		t.Fatal(err)
	}
	n := 100
	if v := os.Getenv("GGSIM_CONFORMANCE_CPU_CHECKS"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			t.Fatalf("GGSIM_CONFORMANCE_CPU_CHECKS=%q is not a positive number", v)
		}
	}
	rep := oracletest.Run(t, be.Impl(), dev, oracletest.Options{
		Checks:     n,
		Properties: oracletest.Determinism | oracletest.NonFiniteInputs,
	})
	if rep != nil && rep.Cases != n {
		t.Errorf("%d cases requested, %d ran to the end", n, rep.Cases)
	}
}

// TestImplDeviceCheck: a CUDA backend's Impl refuses a simulated device of another
// compute capability with ErrOtherDevice, which matches oracle.ErrUnsupported.
func TestImplDeviceCheck(t *testing.T) {
	be := cudaBackend(t)
	info, err := be.Info()
	if err != nil {
		t.Fatal(err)
	}
	var other sim.Device
	for _, d := range sim.Catalog() {
		if d.CC != info.CC && sim.CCIsNVIDIA(d.CC) {
			other = d
			break
		}
	}
	_, err = be.Impl().MulMat(other, quant.Q4_0, make([]byte, 18), 32, 1, make([]float32, 32), 1)
	if !errors.Is(err, oracle.ErrUnsupported) || !errors.Is(err, ErrOtherDevice) {
		t.Fatalf("MulMat for %s (cc %d) on a cc %d GPU: %v", other.Name, other.CC, info.CC, err)
	}
}
