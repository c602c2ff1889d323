//go:build cuda && cgo

package ggml

// Tests against a real ggml build. GGSIM_GGML_DIR names the build's library directory;
// without it (or without a GPU for the CUDA tests) they skip with a message saying so
// (a skip is not a pass); with GGSIM_REQUIRE_GPU=1 they fail instead.
//   GGSIM_GOLDEN=f1.gguf:f2.gguf   golden files to reproduce on CUDA device 0
//   GGSIM_GPU_OUT=DIR              where a capture and a report are written
//   GGSIM_GGML_COMMIT, GGSIM_GGML_BUILD  what to record as golden.ggml.commit / .build

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/gpu/cuda"
	"github.com/ggsim/ggsim/quant"
)

var (
	libOnce sync.Once
	theLib  *Lib
	libErr  error
	repMu   sync.Mutex
)

func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("GGSIM_REQUIRE_GPU") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func ggmlLib(t *testing.T) *Lib {
	t.Helper()
	dir := os.Getenv("GGSIM_GGML_DIR")
	if dir == "" {
		skipOrFail(t, "SKIP (not a pass): GGSIM_GGML_DIR is not set to a ggml build's library directory")
	}
	libOnce.Do(func() { theLib, libErr = Load(dir) })
	if libErr != nil {
		t.Fatalf("loading the ggml build in %s: %v", dir, libErr)
	}
	return theLib
}

var (
	cudaOnce sync.Once
	cudaBe   *Backend
	cudaErr  error
)

func cudaBackend(t *testing.T) *Backend {
	t.Helper()
	l := ggmlLib(t)
	if !l.HasCUDA() {
		skipOrFail(t, "SKIP (not a pass): the ggml build has no libggml-cuda.so")
	}
	if _, err := cuda.QueryDevice(cuda.Options{}); err != nil {
		skipOrFail(t, fmt.Sprintf("SKIP (not a pass): no CUDA device: %v", err))
	}
	cudaOnce.Do(func() { cudaBe, cudaErr = l.NewBackend(BackendSpec{Kind: CUDA}) })
	if cudaErr != nil {
		t.Fatal(cudaErr)
	}
	return cudaBe
}

func report(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	if d := os.Getenv("GGSIM_GPU_OUT"); d != "" {
		repMu.Lock()
		defer repMu.Unlock()
		os.MkdirAll(d, 0o755)
		f, err := os.OpenFile(filepath.Join(d, "ggml-backend.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintf(f, "%s: %s\n", t.Name(), line)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load("/nonexistent/ggml-build")
	if err == nil || !strings.Contains(err.Error(), "libggml-base.so") || !strings.Contains(err.Error(), "dlopen") {
		t.Fatalf("Load of a missing build: %v", err)
	}
}

// f32 weights through the CPU backend: within a float32 accumulation bound of fp64.
func TestCPUMulMatF32(t *testing.T) {
	l := ggmlLib(t)
	be, err := l.NewBackend(BackendSpec{Kind: CPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	info, err := be.Info()
	if err != nil {
		t.Fatal(err)
	}
	report(t, "CPU backend %q (%s), ggml %s commit %s", info.Backend, info.Description, info.GGMLVersion, info.GGMLCommit)
	const K, N, M = 64, 5, 3
	g := NewGen(3)
	w, x := g.Weights(K*N), g.Values(K*M)
	y, err := be.MulMat(quant.F32, f32bytes(w), K, N, x, M)
	if err != nil {
		t.Fatal(err)
	}
	for m := 0; m < M; m++ {
		for n := 0; n < N; n++ {
			var s, abs float64
			for k := 0; k < K; k++ {
				p := float64(w[n*K+k]) * float64(x[m*K+k])
				s += p
				abs += math.Abs(p)
			}
			// K float32 roundings of partial sums bound the error by K·2^-24·Σ|p| (fp16
			// conversion of b is not used for f32 weights on the CPU).
			if d := math.Abs(float64(y[n+N*m]) - s); d > float64(K)*math.Ldexp(abs, -24) {
				t.Fatalf("y[%d,%d] = %g, fp64 %g", n, m, y[n+N*m], s)
			}
		}
	}
	if _, err := be.MulMat(quant.F32, f32bytes(w), K, N, x[:10], M); err == nil {
		t.Fatal("short b accepted")
	}
}

// ggml_quantize_chunk of the build against ggsim's reference quantizers, byte for byte.
func TestQuantizeMatchesQuant(t *testing.T) {
	l := ggmlLib(t)
	g := NewGen(4)
	x := g.Weights(256 * 8)
	checked := 0
	for _, typ := range MMVQTypes {
		got, err := l.Quantize(typ, x, 8, 256, nil)
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := typ.RowSize(256)
		want := make([]byte, len(got))
		missing := false
		for r := 0; r < 8; r++ {
			if err := quant.QuantizeRowRef(typ, x[r*256:(r+1)*256], want[int64(r)*rs:int64(r+1)*rs]); err != nil {
				report(t, "%v: ggsim has no reference quantizer yet (%v); ggml's output not compared", typ, err)
				missing = true
				break
			}
		}
		if missing {
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%v: ggml and ggsim quantizations differ first at byte %d (%#02x vs %#02x)", typ, i, got[i], want[i])
				break
			}
		}
		checked++
	}
	report(t, "ggml_quantize_chunk equals ggsim's reference quantizer for %d of %d MMVQ types", checked, len(MMVQTypes))
	if _, err := l.Quantize(quant.IQ2_XXS, x[:256], 1, 256, nil); err == nil {
		t.Fatal("iq2_xxs without an importance matrix accepted")
	}
}

// A CPU capture of a small plan reads back in schema.
func TestCaptureCPU(t *testing.T) {
	l := ggmlLib(t)
	be, err := l.NewBackend(BackendSpec{Kind: CPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	p := Plan{Types: []quant.Type{quant.Q4_0, quant.Q4_K}, K: 256, N: 16, Batches: []int{1, 3}, QuantRows: 2,
		MoE: []MoEShape{{E: 4, U: 2, T: 3, B1: 1}}, Seed: 1, Repeat: 2}
	w, sum, err := Capture(p, be, l, Meta{Build: "CPU"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.MulMat != 4 || sum.MulMatID != 2 || sum.Quantize != 2 {
		t.Fatalf("summary %+v", sum)
	}
	path := filepath.Join(t.TempDir(), "cpu.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, _ := gguf.Get[uint32](f, "golden.case.count"); n != 8 {
		t.Fatalf("case count %d", n)
	}
}

// goldenResult counts one golden file's reproduction.
type goldenResult struct {
	file                  string
	equal, differ, notRun int
	equalOps, notRunOps   map[string]int
	firstDiff             []string
}

func readF32(f *gguf.File, name string) ([]float32, gguf.TensorInfo, error) {
	ti, ok := f.Tensor(name)
	if !ok {
		return nil, ti, fmt.Errorf("no tensor %q", name)
	}
	if ti.Type != quant.F32 {
		return nil, ti, fmt.Errorf("tensor %q is %v, not f32", name, ti.Type)
	}
	b, err := f.TensorData(name)
	if err != nil {
		return nil, ti, err
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return v, ti, nil
}

// reproduce runs every mul_mat, mul_mat_id, mul_mat_glu, mul_mat_id_glu and quantize
// case of a golden file on be (quantize on the host) and compares the bits (a GLU case
// both with fusion allowed and disabled; see GLU).
func reproduce(t *testing.T, l *Lib, be *Backend, path string) goldenResult {
	res := goldenResult{file: filepath.Base(path), equalOps: map[string]int{}, notRunOps: map[string]int{}}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := gguf.Get[uint32](f, "golden.case.count")
	if err != nil {
		t.Fatal(err)
	}
	diff := func(c int, what string) {
		res.differ++
		if len(res.firstDiff) < 5 {
			res.firstDiff = append(res.firstDiff, fmt.Sprintf("case %d: %s", c, what))
		}
	}
	for c := 0; c < int(n); c++ {
		pre := fmt.Sprintf("golden.case.%d.", c)
		op, _ := gguf.Get[string](f, pre+"op")
		src, _ := gguf.GetArray[string](f, pre+"src")
		dst, _ := gguf.Get[string](f, pre+"dst")
		switch op {
		case "mul_mat":
			wi, _ := f.Tensor(src[0])
			w, _ := f.TensorData(src[0])
			x, xi, err := readF32(f, src[1])
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := readF32(f, dst)
			if err != nil {
				t.Fatal(err)
			}
			ne, xne := wi.NE(), xi.NE()
			y, err := be.MulMat(wi.Type, w, int(ne[0]), int(ne[1]), x, int(xne[1]))
			if err != nil {
				t.Fatalf("case %d: %v", c, err)
			}
			if at, ok := sameBits(y, want); !ok {
				diff(c, fmt.Sprintf("mul_mat %v %v x %v: element %d is %#08x, golden %#08x", wi.Type, ne, xne, at, math.Float32bits(y[at]), math.Float32bits(want[at])))
			} else {
				res.equal++
				res.equalOps[op]++
			}
		case "mul_mat_id":
			ai, _ := f.Tensor(src[0])
			as, _ := f.TensorData(src[0])
			x, xi, err := readF32(f, src[1])
			if err != nil {
				t.Fatal(err)
			}
			idi, _ := f.Tensor(src[2])
			idb, _ := f.TensorData(src[2])
			ids := make([]int32, len(idb)/4)
			for i := range ids {
				ids[i] = int32(uint32(idb[4*i]) | uint32(idb[4*i+1])<<8 | uint32(idb[4*i+2])<<16 | uint32(idb[4*i+3])<<24)
			}
			want, _, err := readF32(f, dst)
			if err != nil {
				t.Fatal(err)
			}
			ane, xne, ine := ai.NE(), xi.NE(), idi.NE()
			y, err := be.MulMatID(ai.Type, as, int(ane[0]), int(ane[1]), int(ane[2]), x, int(xne[1]), int(xne[2]), ids, int(ine[0]))
			if err != nil {
				t.Fatalf("case %d: %v", c, err)
			}
			if at, ok := sameBits(y, want); !ok {
				diff(c, fmt.Sprintf("mul_mat_id %v %v: element %d is %#08x, golden %#08x", ai.Type, ane, at, math.Float32bits(y[at]), math.Float32bits(want[at])))
			} else {
				res.equal++
				res.equalOps[op]++
			}
		case "mul_mat_glu", "mul_mat_id_glu":
			// Run with fusion allowed (one graph) and disabled (three graphs): the golden
			// capture found the same bits both ways, so both must give the golden bits.
			kind, _ := gguf.Get[string](f, pre+"glu")
			alpha, _ := gguf.Get[float32](f, pre+"glu_alpha")
			limit, _ := gguf.Get[float32](f, pre+"glu_limit")
			gi, _ := f.Tensor(src[0])
			gate, _ := f.TensorData(src[0])
			up, _ := f.TensorData(src[1])
			x, xi, err := readF32(f, src[2])
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := readF32(f, dst)
			if err != nil {
				t.Fatal(err)
			}
			gne, xne := gi.NE(), xi.NE()
			ok := true
			for _, fused := range []bool{true, false} {
				glu := GLU{Op: kind, Alpha: alpha, Limit: limit, Fused: fused}
				var y []float32
				if op == "mul_mat_glu" {
					y, err = be.MulMatGLU(gi.Type, gate, up, int(gne[0]), int(gne[1]), x, int(xne[1]), glu)
				} else {
					idi, _ := f.Tensor(src[3])
					idb, _ := f.TensorData(src[3])
					ids := make([]int32, len(idb)/4)
					for i := range ids {
						ids[i] = int32(uint32(idb[4*i]) | uint32(idb[4*i+1])<<8 | uint32(idb[4*i+2])<<16 | uint32(idb[4*i+3])<<24)
					}
					y, err = be.MulMatIDGLU(gi.Type, gate, up, int(gne[0]), int(gne[1]), int(gne[2]), x, int(xne[1]), int(xne[2]), ids, int(idi.NE()[0]), glu)
				}
				if err != nil {
					t.Fatalf("case %d: %v", c, err)
				}
				if at, same := sameBits(y, want); !same {
					ok = false
					diff(c, fmt.Sprintf("%s %v %v %v: element %d is %#08x, golden %#08x", op, gi.Type, gne, glu, at, math.Float32bits(y[at]), math.Float32bits(want[at])))
				}
			}
			if ok {
				res.equal++
				res.equalOps[op]++
			}
		case "quantize":
			x, xi, err := readF32(f, src[0])
			if err != nil {
				t.Fatal(err)
			}
			di, _ := f.Tensor(dst)
			want, _ := f.TensorData(dst)
			ne := xi.NE()
			got, err := l.Quantize(di.Type, x, int(ne[1]), int(ne[0]), nil)
			if err != nil {
				t.Fatalf("case %d: %v", c, err)
			}
			if string(got) != string(want) {
				diff(c, fmt.Sprintf("quantize %v: bytes differ", di.Type))
			} else {
				res.equal++
				res.equalOps[op]++
			}
		default:
			res.notRun++
			res.notRunOps[op]++
		}
	}
	return res
}

// The golden reader runs here on the CPU backend: quantize cases (host code) must be
// byte-exact; mul_mat on the CPU is a different algorithm, so only counted.
func TestReproduceOnCPU(t *testing.T) {
	l := ggmlLib(t)
	files := os.Getenv("GGSIM_GOLDEN")
	if files == "" {
		skipOrFail(t, "SKIP (not a pass): GGSIM_GOLDEN names no golden file")
	}
	cpu, err := l.NewBackend(BackendSpec{Kind: CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	for _, p := range strings.Split(files, ":") {
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		nq := 0
		n, _ := gguf.Get[uint32](f, "golden.case.count")
		for c := 0; c < int(n); c++ {
			if op, _ := gguf.Get[string](f, fmt.Sprintf("golden.case.%d.op", c)); op == "quantize" {
				nq++
			}
		}
		f.Close()
		r := reproduce(t, l, cpu, p)
		report(t, "%s on the CPU backend: %d quantize cases of %d byte-exact; mul_mat %d, mul_mat_id %d bit-exact with the GPU's bits (not expected); %d not run %v",
			r.file, r.equalOps["quantize"], nq, r.equalOps["mul_mat"], r.equalOps["mul_mat_id"], r.notRun, r.notRunOps)
		if r.equalOps["quantize"] != nq {
			t.Errorf("%s: %d of %d quantize cases differ", r.file, nq-r.equalOps["quantize"], nq)
		}
	}
}

// The shared golden files, made on an H200 with the same ggml commit, are reproduced
// bit for bit by this build through this package.
func TestCUDAReproducesGolden(t *testing.T) {
	be := cudaBackend(t)
	l := ggmlLib(t)
	files := os.Getenv("GGSIM_GOLDEN")
	if files == "" {
		skipOrFail(t, "SKIP (not a pass): GGSIM_GOLDEN names no golden file")
	}
	info, err := be.Info()
	if err != nil {
		t.Fatal(err)
	}
	report(t, "CUDA backend %s: %s, cc %d, %d SMs, driver %s (CUDA driver API %d), ggml %s commit %s",
		info.Backend, info.Name, info.CC, info.SMCount, info.Driver, info.DriverAPI, info.GGMLVersion, info.GGMLCommit)
	for _, p := range strings.Split(files, ":") {
		r := reproduce(t, l, be, p)
		report(t, "%s: %d cases bit-exact, %d differ, %d not run %v", r.file, r.equal, r.differ, r.notRun, r.notRunOps)
		for _, d := range r.firstDiff {
			report(t, "    %s", d)
		}
		if r.differ != 0 {
			t.Errorf("%s: %d cases differ from the golden bits", r.file, r.differ)
		}
	}
}

// Capture the default MMVQ plan on the GPU and write it to $GGSIM_GPU_OUT.
func TestCaptureCUDA(t *testing.T) {
	be := cudaBackend(t)
	l := ggmlLib(t)
	meta := Meta{Commit: os.Getenv("GGSIM_GGML_COMMIT"), Build: os.Getenv("GGSIM_GGML_BUILD")}
	w, sum, err := Capture(DefaultPlan(20261129), be, l, meta)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "captured %d mul_mat and %d quantize cases (%d tensors) on %s, each product run twice with identical bits",
		sum.MulMat, sum.Quantize, sum.Tensors, sum.Device.Name)
	if d := os.Getenv("GGSIM_GPU_OUT"); d != "" {
		path := filepath.Join(d, "ggml-capture-mmvq.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		// The file reproduces on the same backend.
		r := reproduce(t, l, be, path)
		report(t, "re-running the capture %s: %d bit-exact, %d differ", filepath.Base(path), r.equal, r.differ)
		if r.differ != 0 || r.equal != sum.MulMat+sum.Quantize {
			t.Errorf("the capture does not reproduce: %+v", r)
		}
	}
}

// Both backends against fp64 over the dequantized weights (the second half of a
// verdict): activations are quantized to 8 bits by both, so each is within a few
// percent normwise; the 10% bound catches a kernel that is deterministic and wrong
// (errors of order 100%). Seen on the inputs of the first device run's capture
// (DefaultPlan(20261129)): CUDA q4_K 0.8%, q4_0 3.4% (q8_1's block sum is stored as
// binary16 and enters the result through q4_0's -8 offset); a CPU-only build of the
// same ggml on the same inputs: q4_K 1.8% (q8_K blocks of 256), q4_0 1.0%.
func TestBackendsAgainstFP64(t *testing.T) {
	be := cudaBackend(t)
	l := ggmlLib(t)
	cpu, err := l.NewBackend(BackendSpec{Kind: CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	const K, N, M = 1024, 128, 4
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q4_0} {
		g := NewGen(8)
		w, err := l.Quantize(typ, g.Weights(K*N), N, K, nil)
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := typ.RowSize(K)
		deq := make([]float32, K*N)
		for n := 0; n < N; n++ {
			if err := quant.DequantizeRow(typ, w[int64(n)*rs:int64(n+1)*rs], deq[n*K:(n+1)*K]); err != nil {
				t.Skipf("SKIP (not a pass): ggsim cannot dequantize %v: %v", typ, err)
			}
		}
		x := g.Values(K * M)
		truth := make([]float64, N*M)
		var tn float64
		for m := 0; m < M; m++ {
			for n := 0; n < N; n++ {
				var s float64
				for k := 0; k < K; k++ {
					s += float64(deq[n*K+k]) * float64(x[m*K+k])
				}
				truth[n+N*m] = s
				tn += s * s
			}
		}
		for _, b := range []*Backend{be, cpu} {
			y, err := b.MulMat(typ, w, K, N, x, M)
			if err != nil {
				t.Fatal(err)
			}
			var e2 float64
			for i := range y {
				d := float64(y[i]) - truth[i]
				e2 += d * d
			}
			rel := math.Sqrt(e2 / tn)
			report(t, "%v K=%d N=%d M=%d on %v: normwise error against fp64 of the dequantized weights %.3g", typ, K, N, M, b.Spec(), rel)
			if rel > 0.10 {
				t.Errorf("%v on %v: normwise error %.3g above 10%%", typ, b.Spec(), rel)
			}
		}
	}
}
