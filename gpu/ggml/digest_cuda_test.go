//go:build cuda && cgo

package ggml

// Digest sweeps (oracle/oracletest.DigestSweep) on a real ggml build: every chunk is
// computed on CUDA device 0 and by the simulator, chunk digests compared, and the sweep's
// digest printed, which `simrun sweep digest` (any machine, any sharding) and
// `simrun digest combine` must reproduce.
//
//   GGSIM_DIGEST="blocks type=q4_K seed=1 chunks=1024"   the sweep (else: skip, not a pass)
//   GGSIM_DIGEST_SHARD=i/n                                only the chunks i, i+n, ... (the
//                                                         digest is then that shard's part)
//
// Only blocks sweeps have a GPU counterpart: quantize_q8_1 is not an op a ggml build
// exposes, so the q8_1 sweep is the simulator's alone.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
)

func TestDigestCUDA(t *testing.T) {
	spec := os.Getenv("GGSIM_DIGEST")
	if spec == "" {
		skipOrFail(t, "SKIP (not a pass): GGSIM_DIGEST is not set")
	}
	s, err := oracletest.ParseDigestSweep(spec)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != oracletest.DigestBlocks {
		t.Fatalf("GGSIM_DIGEST=%q: only blocks sweeps run on a GPU", spec)
	}
	si, sn := 0, 1
	if v := os.Getenv("GGSIM_DIGEST_SHARD"); v != "" {
		a, b, ok := strings.Cut(v, "/")
		si, err = strconv.Atoi(a)
		n, err2 := strconv.Atoi(b)
		if !ok || err != nil || err2 != nil || n < 1 || si < 0 || si >= n {
			t.Fatalf("GGSIM_DIGEST_SHARD=%q: want i/n", v)
		}
		sn = n
	}
	be := cudaBackend(t)
	info, err := be.Info()
	if err != nil {
		t.Fatal(err)
	}
	dev, err := oracle.DeviceOf(golden.Meta{Device: golden.Device{Name: info.Name, CC: info.CC, SMCount: info.SMCount, Driver: info.Driver}})
	if err != nil {
		t.Fatalf("no simulated device for %s (cc %d): %v", info.Name, info.CC, err)
	}
	gpu, simu := be.Impl(), ggsim.NewSimulator()
	var chunks []string
	match := 0
	for c := si; c < s.Chunks; c += sn {
		g, err := s.RunChunk(c, gpu, dev)
		if err != nil {
			t.Fatalf("GPU: %v", err)
		}
		m, err := s.RunChunk(c, simu, dev)
		if err != nil {
			t.Fatalf("simulator: %v", err)
		}
		if g == m {
			match++
		} else {
			t.Errorf("chunk %d: GPU %s, simulator %s", c, g, m)
		}
		chunks = append(chunks, fmt.Sprintf("chunk %d %s", c, g))
	}
	report(t, "digest sweep %s on %s (cc %d, %d SMs), ggml %s, shard %d/%d: %d/%d chunks match the simulator",
		s, info.Name, info.CC, info.SMCount, info.GGMLVersion, si, sn, match, len(chunks))
	if sn == 1 {
		ds := make([]string, len(chunks))
		for i, l := range chunks {
			ds[i] = strings.Fields(l)[2]
		}
		d, err := oracletest.CombineDigests(s, ds)
		if err != nil {
			t.Fatal(err)
		}
		report(t, "digest %s on %s: %s", s, dev.Name, d)
	} else {
		// The part, in the format simrun digest combine reads.
		report(t, "# ggsim digest part v1\nspec %s\ndevice %s\nshard %d/%d\n%s", s, dev.Name, si, sn, strings.Join(chunks, "\n"))
	}
}
