package oracle_test

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// The references hold one weight row in float64 at a time: what they allocate is the
// outputs (Value, Bound, Center: 3·N·M·8 bytes), the activation columns and rows, far
// below the K·N·8 bytes of the matrix in float64 they once made (twice, in MulMatRefOn).
func TestReferenceAllocations(t *testing.T) {
	const K, N, M = 4096, 512, 2
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []quant.Type{quant.Q4_K, quant.IQ2_XXS} { // the kernel bound, MulMatRef's
		a, err := oracletest.RealisticWeights(typ, K, N, 1)
		if err != nil {
			t.Fatal(err)
		}
		b := oracletest.RealisticActivations(K, M, 1)
		matrix := uint64(K * N * 8)
		limit := matrix / 8 // 2 MiB here; the outputs are 24 KiB, the columns under 1 MiB
		var refErr error
		if got := allocated(func() { _, refErr = oracle.MulMatRefOn(dev, typ, a, K, N, b, M) }); refErr != nil || got > limit {
			t.Errorf("%v MulMatRefOn (%s): %d bytes allocated (err %v), want under %d (the matrix in float64 is %d)", typ, oracle.KernelPath(dev, typ, K, N, M), got, refErr, limit, matrix)
		}
		if got := allocated(func() { _, refErr = oracle.MulMatRef(typ, a, K, N, b, M) }); refErr != nil || got > limit {
			t.Errorf("%v MulMatRef: %d bytes allocated (err %v), want under %d", typ, got, refErr, limit)
		}
		// MMQ (12 columns): its stream-K bound's scratch is reused from output to output.
		b12 := oracletest.RealisticActivations(K, 12, 1)
		if got := allocated(func() { _, refErr = oracle.MulMatRefOn(dev, typ, a, K, N, b12, 12) }); refErr != nil || got > limit {
			t.Errorf("%v MulMatRefOn (%s): %d bytes allocated (err %v), want under %d", typ, oracle.KernelPath(dev, typ, K, N, 12), got, refErr, limit)
		}
		// MUL_MAT_ID: 4 experts of N/4 rows, 2 tokens of 2 slots, every expert used once.
		ids := []int32{0, 1, 2, 3}
		if got := allocated(func() { _, refErr = oracle.MulMatIDRefOn(dev, typ, a, K, N/4, 4, b, 1, 2, ids, 2) }); refErr != nil || got > limit {
			t.Errorf("%v MulMatIDRefOn: %d bytes allocated (err %v), want under %d", typ, got, refErr, limit)
		}
	}
}

// peakHeap samples the live heap (runtime/metrics heap objects) every millisecond while
// f runs and returns the largest sample: a lower bound on the true peak, close to it for
// allocations that live for more than a millisecond.
func peakHeap(f func()) uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(s); return s[0].Value.Uint64() }
	runtime.GC()
	peak := read()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				peak = max(peak, read())
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return max(peak, read())
}

// BenchmarkRunReferenceMemory is simrun run's reference (MulMatRefOn) on the largest
// shape of docs/speed.md's Memory table, q4_K 4096 × 14336 × 8 on the H200, with the
// memory it takes: alloc-MB/op (bytes allocated), peak-heap-MB (sampled live heap,
// weights and activations included) and peak/inputs (that over weights + activations +
// outputs in their own formats: 33.6 MB) of MulMatRefOn (the whole-matrix code it replaced
// measured 1007 peak-heap-MB at commit 47dbb87: docs/speed.md, Memory). Run it with
//
//	go test -run '^$' -bench RunReferenceMemory -benchtime 1x ./oracle/
func BenchmarkRunReferenceMemory(b *testing.B) {
	const K, N, M = 4096, 14336, 8
	dev, err := sim.Lookup("H200")
	if err != nil {
		b.Fatal(err)
	}
	a, err := oracletest.RealisticWeights(quant.Q4_K, K, N, 1)
	if err != nil {
		b.Fatal(err)
	}
	x := oracletest.RealisticActivations(K, M, 1)
	inputs := float64(len(a) + 4*len(x) + 4*N*M)
	for _, v := range []struct {
		name string
		ref  func(sim.Device, quant.Type, []byte, int, int, []float32, int) (*oracle.Reference, error)
	}{{"rows", oracle.MulMatRefOn}} {
		b.Run(v.name, func(b *testing.B) {
			var alloc, peak uint64
			for range b.N {
				var refErr error
				alloc += allocated(func() {
					peak = max(peak, peakHeap(func() { _, refErr = v.ref(dev, quant.Q4_K, a, K, N, x, M) }))
				})
				if refErr != nil {
					b.Fatal(refErr)
				}
			}
			b.ReportMetric(float64(alloc)/float64(b.N)/1e6, "alloc-MB/op")
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
			b.ReportMetric(float64(peak)/inputs, "peak/inputs")
		})
	}
}
