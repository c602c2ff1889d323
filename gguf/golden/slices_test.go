package golden

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/gguf"
)

const slicesDir = "../../testdata/golden"

// The provenance of every committed slice (from the full set's README).
var h200Meta = Meta{
	Device:     Device{Name: "NVIDIA H200", CC: 900, SMCount: 132, Driver: "580.159.04"},
	GGMLCommit: "d99724f2b141fed9e1a9f402213506c081433465",
	GGMLBuild:  "CUDA 13.0.88, CMAKE_CUDA_ARCHITECTURES=90, GGML_CUDA_FA=OFF, Release",
}

// TestCommittedSlices opens every committed slice with OpenValid (all cases valid, all ids
// in range) and checks the provenance, the slice keys and the ops the slices must cover.
func TestCommittedSlices(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(slicesDir, "*.slice.gguf"))
	if err != nil || len(paths) != 5 {
		t.Fatalf("found %d slices (%v)", len(paths), err)
	}
	ops := map[Op]int{}
	glus := map[string]int{}
	var total int64
	for _, p := range paths {
		f, err := OpenValid(p)
		if err != nil {
			t.Fatal(err)
		}
		m := f.Meta
		m.Producer = ""
		if m != h200Meta || f.Producer == "" {
			t.Errorf("%s: provenance %+v", p, f.Meta)
		}
		src, err := gguf.Get[string](f.GGUF, "golden.slice.source")
		if err != nil || filepath.Base(p) != strings.TrimSuffix(src, ".gguf")+".slice.gguf" {
			t.Errorf("%s: golden.slice.source = %q, %v", p, src, err)
		}
		idx, err := gguf.GetArray[uint32](f.GGUF, "golden.slice.cases")
		if err != nil || len(idx) != len(f.Cases) || len(idx) < 2 {
			t.Errorf("%s: golden.slice.cases = %v for %d cases (%v)", p, idx, len(f.Cases), err)
		}
		for _, c := range f.Cases {
			ops[c.Op]++
			if c.GLU != "" {
				glus[c.GLU]++
			}
			if c.GLU == GLUSwiGLUOAI && (math.Float32bits(c.GLUAlpha) != math.Float32bits(1.702) || c.GLULimit != 7) {
				t.Errorf("%s case %d: alpha %v limit %v", p, c.Index, c.GLUAlpha, c.GLULimit)
			}
			// Every tensor decodes.
			for _, n := range append(append([]string(nil), c.Src...), c.Dst) {
				tt, err := f.Tensor(n)
				if err != nil {
					t.Fatal(err)
				}
				ti, _ := f.GGUF.Tensor(n)
				if int64(len(tt.Data)) != ti.Size {
					t.Errorf("%s: tensor %q has %d bytes, want %d", p, n, len(tt.Data), ti.Size)
				}
			}
			y, err := f.Tensor(c.Dst)
			if err != nil {
				t.Fatal(err)
			}
			if c.Op != OpQuantize {
				v, err := y.F32()
				if err != nil {
					t.Fatal(err)
				}
				nonzero := 0
				for _, x := range v {
					if x != 0 && !math.IsNaN(float64(x)) {
						nonzero++
					}
				}
				if nonzero < len(v)/2 {
					t.Errorf("%s case %d: only %d of %d outputs are non-zero numbers", p, c.Index, nonzero, len(v))
				}
			}
		}
		if err := f.GGUF.CheckGGMLLayout(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		total += f.GGUF.Size
		f.Close()
	}
	for _, op := range []Op{OpMulMat, OpMulMatID, OpQuantize, OpMulMatGLU} {
		if ops[op] == 0 {
			t.Errorf("no %s case in the slices", op)
		}
	}
	if glus[GLUSwiGLU] == 0 || glus[GLUSwiGLUOAI] == 0 {
		t.Errorf("GLU kinds covered: %v", glus)
	}
	if total > 3400000 { // MMVQ, MMQ (stream-K with fixup), MoE, GLU and extra-type cases
		t.Errorf("the slices take %d bytes", total)
	}
}

// TestSlicesMatchOriginals checks the committed slices against the full golden set, when
// GGSIM_SHARED_GOLDEN names its directory: the provenance keys are the original's, each
// case is the original case golden.slice.cases names, and every tensor is the original's
// byte for byte (name, type, dims, data). It also opens every original with OpenValid.
func TestSlicesMatchOriginals(t *testing.T) {
	dir := os.Getenv("GGSIM_SHARED_GOLDEN")
	if dir == "" {
		t.Skip("GGSIM_SHARED_GOLDEN is not set (e.g. ../shared/golden): the full golden set is not part of the repository")
	}
	origs, err := filepath.Glob(filepath.Join(dir, "*.gguf"))
	if err != nil || len(origs) == 0 {
		t.Fatalf("no golden files in %s (%v)", dir, err)
	}
	for _, p := range origs {
		f, err := OpenValid(p)
		if err != nil {
			t.Errorf("original: %v", err)
			continue
		}
		t.Logf("%s: %d cases valid, ids in range", filepath.Base(p), len(f.Cases))
		f.Close()
	}
	paths, _ := filepath.Glob(filepath.Join(slicesDir, "*.slice.gguf"))
	sort.Strings(paths)
	for _, p := range paths {
		s, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := gguf.Get[string](s.GGUF, "golden.slice.source")
		idx, _ := gguf.GetArray[uint32](s.GGUF, "golden.slice.cases")
		o, err := Open(filepath.Join(dir, src))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{KeyArchitecture, KeyVersion, KeyProducer, KeyDeviceName, KeyDeviceCC, KeyDeviceSMs, KeyDriver, KeyCommit, KeyBuild} {
			sv, _ := s.GGUF.Lookup(k)
			ov, _ := o.GGUF.Lookup(k)
			if !sv.Equal(ov) {
				t.Errorf("%s: %s = %v, original %v", p, k, sv, ov)
			}
		}
		// Keys beyond the schema and the case keys are the original's too.
		for _, kv := range o.GGUF.KV {
			if strings.HasPrefix(kv.Key, "golden.case.") || kv.Key == gguf.KeyAlignment {
				continue
			}
			if v, ok := s.GGUF.Lookup(kv.Key); !ok || !v.Equal(kv.Value) {
				t.Errorf("%s: key %s = %v, original %v", p, kv.Key, v, kv.Value)
			}
		}
		for i, c := range s.Cases {
			oc := o.Cases[idx[i]]
			if c.Op != oc.Op || strings.Join(c.Src, ",") != strings.Join(oc.Src, ",") || c.Dst != oc.Dst ||
				c.GLU != oc.GLU || c.Fusion != oc.Fusion || c.HasGLUParams != oc.HasGLUParams ||
				math.Float32bits(c.GLUAlpha) != math.Float32bits(oc.GLUAlpha) || math.Float32bits(c.GLULimit) != math.Float32bits(oc.GLULimit) ||
				c.Shape != oc.Shape || c.WeightType != oc.WeightType {
				t.Errorf("%s case %d differs from %s case %d:\n%+v\n%+v", p, i, src, idx[i], c, oc)
			}
		}
		for _, ti := range s.GGUF.Tensors {
			oi, ok := o.GGUF.Tensor(ti.Name)
			if !ok || oi.Type != ti.Type || !sameDims(oi.Dims, ti.Dims) {
				t.Errorf("%s: tensor %q %v %v, original %v %v (%v)", p, ti.Name, ti.Type, ti.Dims, oi.Type, oi.Dims, ok)
				continue
			}
			sd, err1 := s.GGUF.TensorData(ti.Name)
			od, err2 := o.GGUF.TensorData(ti.Name)
			if err1 != nil || err2 != nil || !bytes.Equal(sd, od) {
				t.Errorf("%s: tensor %q bytes differ from the original's (%v, %v)", p, ti.Name, err1, err2)
			}
		}
		t.Logf("%s: %d cases, %d tensors identical to %s", filepath.Base(p), len(s.Cases), len(s.GGUF.Tensors), src)
		s.Close()
		o.Close()
	}
}

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
