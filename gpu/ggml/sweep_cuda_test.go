//go:build cuda && cgo

package ggml

// Sweeps (oracle/oracletest.Sweep) on a real ggml build: each case is generated from
// (kind, seed, index), computed on CUDA device 0, and recorded as one line with the
// SHA-256 of its output bits. The record is verified anywhere by the simulator
// (`simrun sweep verify`), which regenerates every case.
//
//   GGSIM_SWEEP=KIND:SEED:FROM-TO[,KIND:SEED:FROM-TO...]   cases to run (else: skip, not a pass)
//   GGSIM_SWEEP_OUT=FILE                                   the record (one line per case)
//   GGSIM_SWEEP_FULL=N                                     also the full output of the first N
//                                                          cases of each part, FILE.full
//   (kinds mmq, mmqid, glu, gluid, gluid2; GGML_CUDA_DISABLE_FUSION unset for the GLU kinds)
//   GGSIM_SWEEP_BACKEND=cpu                                ggml's CPU backend instead (to try
//                                                          the harness; its bits are not the GPU's)

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle/oracletest"
)

type sweepPart struct {
	kind     string
	seed     uint64
	from, to int
}

func parseSweepSpec(s string) ([]sweepPart, error) {
	var parts []sweepPart
	for _, p := range strings.Split(s, ",") {
		f := strings.Split(p, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("GGSIM_SWEEP part %q: want KIND:SEED:FROM-TO", p)
		}
		seed, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("GGSIM_SWEEP part %q: seed: %v", p, err)
		}
		lo, hi, ok := strings.Cut(f[2], "-")
		from, err1 := strconv.Atoi(lo)
		to, err2 := strconv.Atoi(hi)
		if !ok || err1 != nil || err2 != nil || from < 0 || to < from {
			return nil, fmt.Errorf("GGSIM_SWEEP part %q: range %q is not FROM-TO", p, f[2])
		}
		parts = append(parts, sweepPart{f[0], seed, from, to})
	}
	return parts, nil
}

func TestSweepCUDA(t *testing.T) {
	spec := os.Getenv("GGSIM_SWEEP")
	if spec == "" {
		skipOrFail(t, "SKIP (not a pass): GGSIM_SWEEP is not set")
	}
	parts, err := parseSweepSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		// ggml reads GGML_CUDA_DISABLE_FUSION once per process: with it set, the GLU
		// cases with fusion allowed would silently run unfused.
		if (p.kind == oracletest.SweepGLU || p.kind == oracletest.SweepGLUID || p.kind == oracletest.SweepGLUID2) && os.Getenv("GGML_CUDA_DISABLE_FUSION") != "" {
			t.Fatalf("GGML_CUDA_DISABLE_FUSION is set: unset it for the GLU sweep kinds (their cases say fusion allowed or disabled themselves)")
		}
	}
	outPath := os.Getenv("GGSIM_SWEEP_OUT")
	if outPath == "" {
		t.Fatal("GGSIM_SWEEP_OUT is not set")
	}
	nFull := 0
	if v := os.Getenv("GGSIM_SWEEP_FULL"); v != "" {
		if nFull, err = strconv.Atoi(v); err != nil {
			t.Fatalf("GGSIM_SWEEP_FULL=%q: %v", v, err)
		}
	}
	var be *Backend
	if os.Getenv("GGSIM_SWEEP_BACKEND") == "cpu" { // to try the harness without a GPU
		if be, err = ggmlLib(t).NewBackend(BackendSpec{Kind: CPU, Threads: 2}); err != nil {
			t.Fatal(err)
		}
		defer be.Close()
	} else {
		be = cudaBackend(t)
	}
	info, err := be.Info()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	fmt.Fprintln(w, oracletest.SweepHeader("ggml "+info.GGMLVersion,
		golden.Device{Name: info.Name, CC: info.CC, SMCount: info.SMCount, Driver: info.Driver}, time.Now()))
	var full *bufio.Writer
	if nFull > 0 {
		ff, err := os.Create(outPath + ".full")
		if err != nil {
			t.Fatal(err)
		}
		defer ff.Close()
		full = bufio.NewWriter(ff)
		defer full.Flush()
	}
	start := time.Now()
	total, failed := 0, 0
	for _, p := range parts {
		n := p.to - p.from
		cases := make([]chan oracletest.SweepCase, n)
		for i := range cases {
			cases[i] = make(chan oracletest.SweepCase, 1)
		}
		// Generate on every core, ahead of the GPU, in order.
		var next sync.Mutex
		k := 0
		var wg sync.WaitGroup
		sem := make(chan struct{}, 4*runtime.GOMAXPROCS(0)) // at most this many generated cases wait
		for g := 0; g < runtime.GOMAXPROCS(0); g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					sem <- struct{}{} // a token first, then an index: the lowest index never waits
					next.Lock()
					i := k
					k++
					next.Unlock()
					if i >= n {
						<-sem
						return
					}
					c, err := oracletest.Sweep(p.kind, p.seed, p.from+i)
					if err != nil {
						panic(err)
					}
					cases[i] <- c
				}
			}()
		}
		for i := 0; i < n; i++ {
			c := <-cases[i]
			<-sem
			var out []float32
			var err error
			glu := GLU{Op: c.GLU, Alpha: c.GLUAlpha, Limit: c.GLULimit, Fused: c.Fusion == golden.FusionAllowed}
			switch golden.Op(c.Op) {
			case golden.OpMulMat:
				out, err = be.MulMat(c.Type, c.A, c.K, c.N, c.B, c.M)
			case golden.OpMulMatID:
				out, err = be.MulMatID(c.Type, c.A, c.K, c.N, c.E, c.B, c.B1, c.T, c.IDs, c.U)
			case golden.OpMulMatGLU:
				out, err = be.MulMatGLU(c.Type, c.A, c.Up, c.K, c.N, c.B, c.M, glu)
			case golden.OpMulMatIDGLU:
				out, err = be.MulMatIDGLU(c.Type, c.A, c.Up, c.K, c.N, c.E, c.B, c.B1, c.T, c.IDs, c.U, glu)
			default:
				err = fmt.Errorf("sweep case %s/%d: unknown op %q", c.Kind, c.Index, c.Op)
			}
			res := oracletest.SweepResult{Kind: c.Kind, Seed: c.Seed, Index: c.Index, Type: c.Type, Shape: c.Shape(), Profile: c.Profile}
			if err != nil {
				res.Err = err.Error()
				failed++
			} else {
				res.Digest = oracletest.Digest(out)
				if full != nil && i < nFull {
					var hdr [8]byte
					binary.LittleEndian.PutUint32(hdr[:], uint32(c.Index))
					binary.LittleEndian.PutUint32(hdr[4:], uint32(len(out)))
					full.WriteString(c.Kind)
					full.WriteByte(0)
					full.Write(hdr[:])
					var b [4]byte
					for _, v := range out {
						binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
						full.Write(b[:])
					}
				}
			}
			fmt.Fprintln(w, res.String())
			total++
			if total%500 == 0 {
				w.Flush()
				t.Logf("%d cases, %v", total, time.Since(start).Round(time.Second))
			}
		}
		wg.Wait()
	}
	report(t, "sweep %s: %d cases on %s, %d returned an error, %v", spec, total, info.Name, failed, time.Since(start).Round(time.Second))
}
