package oracle_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
)

// goldenSlice is a committed golden slice with the verdicts of its unmutated cases.
type goldenSlice struct {
	name string
	data []byte
	file *golden.File
	base []oracle.CaseResult
}

// goldenSlices reads the committed slices (testdata/golden/*.slice.gguf, a few hundred
// KiB to a MiB each) and verifies them once.
func goldenSlices(tb testing.TB) []goldenSlice {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "*.slice.gguf"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no golden slices in ../testdata/golden (%v)", err)
	}
	var out []goldenSlice
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		f, err := golden.New(bytes.NewReader(data), int64(len(data)), filepath.Base(p))
		if err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		base, err := oracle.VerifyFile(f, ggsim.NewSimulator(), oracle.Options{SkipFP64: true})
		if err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		out = append(out, goldenSlice{filepath.Base(p), data, f, base})
	}
	return out
}

// FuzzVerifyMutated mutates a committed golden slice (XOR of a few bytes: in a case's
// output tensor, in one of its source tensors, or anywhere in the file) and verifies it:
// the file is refused with an error, or every case gets a verdict (bit-exact, MISMATCH,
// UNSUPPORTED or ERROR, the last three with a detail); nothing panics. A mutation that
// changes only bytes of a case's output tensor, whose unmutated case is bit-exact, must
// be reported MISMATCH: a changed golden output is never passed.
func FuzzVerifyMutated(f *testing.F) {
	slicesOf := goldenSlices(f)
	f.Add(uint8(0), uint16(0), uint8(0), uint32(0), []byte{0x01})                 // output, lowest mantissa bit
	f.Add(uint8(1), uint16(1), uint8(0), uint32(7), []byte{0x80, 0, 0, 0x80})     // output, signs
	f.Add(uint8(2), uint16(2), uint8(1), uint32(100), []byte{0xff})               // weights
	f.Add(uint8(3), uint16(3), uint8(4), uint32(5), []byte{0x00, 0x00, 0x40})     // activations
	f.Add(uint8(4), uint16(0), uint8(7), uint32(3), []byte{0x02})                 // ids
	f.Add(uint8(4), uint16(1), uint8(2), uint32(40), []byte{0x10})                // header
	f.Add(uint8(0), uint16(9), uint8(2), uint32(300), []byte{0xff, 0xff, 0xff})   // metadata
	f.Add(uint8(2), uint16(4), uint8(0), uint32(12), []byte{0x00, 0x00, 0x00, 0}) // no change
	f.Fuzz(func(t *testing.T, which uint8, cs uint16, mode uint8, off uint32, xor []byte) {
		if len(xor) > 16 {
			xor = xor[:16]
		}
		g := slicesOf[int(which)%len(slicesOf)]
		ci := int(cs) % len(g.file.Cases)
		c := &g.file.Cases[ci]
		// The region to mutate: the case's output, one of its sources, or the whole file.
		lo, hi := 0, len(g.data)
		if mode%3 != 2 && c.Err == nil {
			name := c.Dst
			if mode%3 == 1 {
				name = c.Src[int(mode/3)%len(c.Src)]
			}
			ti, ok := g.file.GGUF.Tensor(name)
			if !ok {
				t.Fatalf("%s case %d: no tensor %q", g.name, ci, name)
			}
			lo = int(g.file.GGUF.DataOffset + int64(ti.Offset))
			hi = lo + int(ti.Size)
		}
		mut := slices.Clone(g.data)
		pos := lo + int(off%uint32(hi-lo))
		changed := false
		for i, x := range xor {
			if pos+i >= hi {
				break
			}
			mut[pos+i] ^= x
			changed = changed || x != 0
		}
		outputOnly := changed && mode%3 == 0 && c.Err == nil

		mf, err := golden.New(bytes.NewReader(mut), int64(len(mut)), g.name)
		if err != nil {
			if mf != nil {
				t.Fatalf("file error %v with a file", err)
			}
			if outputOnly {
				t.Fatalf("a mutation of tensor data only made the file unreadable: %v", err)
			}
			return
		}
		// Verify the chosen case alone (a whole slice takes ~50 ms; one case a few).
		first := 0
		if ci < len(mf.Cases) {
			mf.Cases, first = mf.Cases[ci:ci+1], ci
		}
		res, err := oracle.VerifyFile(mf, ggsim.NewSimulator(), oracle.Options{SkipFP64: mode&0x80 == 0})
		if err != nil {
			return // the file as a whole refused
		}
		if len(res) != len(mf.Cases) {
			t.Fatalf("%d verdicts for %d cases", len(res), len(mf.Cases))
		}
		for i := range res {
			r := &res[i]
			switch r.Status {
			case oracle.StatusBitExact:
			case oracle.StatusMismatch, oracle.StatusUnsupported, oracle.StatusError:
				if r.Detail == "" {
					t.Fatalf("case %d: %s without a detail", i, r.Status)
				}
				if r.OK() {
					t.Fatalf("case %d: %s reported OK", i, r.Status)
				}
			default:
				t.Fatalf("case %d: status %q", i, r.Status)
			}
			_ = r.Line()
		}
		if outputOnly && g.base[ci].Status == oracle.StatusBitExact && res[ci-first].Status != oracle.StatusMismatch {
			t.Fatalf("%s case %d: output bytes %d..%d changed (XOR % x), verdict %s: %s",
				g.name, ci, pos-lo, pos-lo+len(xor), xor, res[ci-first].Status, res[ci-first].Line())
		}
		if !changed {
			for i := range res {
				if res[i].Status != g.base[first+i].Status {
					t.Fatalf("case %d: unchanged file, verdict %s, first %s", first+i, res[i].Status, g.base[first+i].Status)
				}
			}
		}
	})
}
