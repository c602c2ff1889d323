package gguf

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ggsim/ggsim/quant"
)

// The reader's bounds: memory at most allocFactor times the file's size (plus
// allocSlack for a tiny file), and time linear in the file's size.
const (
	allocFactor = 16
	allocSlack  = 16 << 10
)

// claims are tiny files that declare huge counts and lengths; each must be refused
// without allocating for the claim.
func claims() map[string][]byte {
	hdr := func(nt, nkv uint64) *raw { r := &raw{}; return r.header(3, nt, nkv) }
	key := func() *raw { return hdr(0, 1).str("k") }
	return map[string][]byte{
		"n_kv=2^63":                hdr(0, 1<<63).Bytes(),
		"n_kv=2^64-1":              hdr(0, math.MaxUint64).Bytes(),
		"n_tensors=2^62":           hdr(1<<62, 0).Bytes(),
		"n_tensors=2^40,n_kv=1":    hdr(1<<40, 1).kvU32("k", 1).Bytes(),
		"key_len=2^62":             hdr(0, 1).u64(1 << 62).Bytes(),
		"string_len=2^40":          key().u32(uint32(TypeString)).u64(1 << 40).Bytes(),
		"string_len=2^30":          key().u32(uint32(TypeString)).u64(1 << 30).Bytes(),
		"array_len=2^60,u64":       key().u32(uint32(TypeArray)).u32(uint32(TypeUint64)).u64(1 << 60).Bytes(),
		"array_len=2^30,u8":        key().u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(1 << 30).Bytes(),
		"array_len=2^40,string":    key().u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1 << 40).Bytes(),
		"array_len=2^40,array":     key().u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1 << 40).Bytes(),
		"nested_len=2^40":          key().u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1).u32(uint32(TypeUint8)).u64(1 << 40).Bytes(),
		"string_elem_len=2^40":     key().u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1).u64(1 << 40).Bytes(),
		"name_len=2^40":            hdr(1, 0).u64(1 << 40).u64(0).u64(0).Bytes(),
		"n_dims=2^32-1":            hdr(1, 0).str("t").u32(math.MaxUint32).u64(1).Bytes(),
		"dims=2^62x4,f32":          hdr(1, 0).tensor("t", quant.F32, 0, 1<<62, 1<<62, 1<<62, 1<<62).Bytes(),
		"dims=2^62,0,f32":          hdr(1, 0).tensor("t", quant.F32, 0, 1<<62, 0).pad(32).Bytes(),
		"dims=2^60,f64":            hdr(1, 0).tensor("t", quant.F64, 0, 1<<60).pad(32).Bytes(),
		"offset=2^63":              hdr(1, 0).tensor("t", quant.F32, 1<<63, 4).pad(32).Bytes(),
		"alignment=2^31,1 tensor":  hdr(1, 1).kvU32(KeyAlignment, 1<<31).tensor("t", quant.F32, 0, 4).Bytes(),
		"alignment=2^31,no tensor": hdr(0, 1).kvU32(KeyAlignment, 1<<31).Bytes(),
	}
}

// worst builds, for a count n, the valid files that make the reader do the most per byte:
// the most records of the smallest kind.
func worst(n int) map[string][]byte {
	key := func(i int) string { return "k" + strconv.Itoa(1e8+i) }
	out := map[string][]byte{}

	r := (&raw{}).header(3, 0, uint64(n)) // many u8 keys
	for i := range n {
		r.str(key(i)).u32(uint32(TypeUint8)).u8(1)
	}
	out["keys"] = r.Bytes()

	r = (&raw{}).header(3, uint64(n), 0) // many zero-element tensors, all at offset 0
	for i := range n {
		r.tensor(key(i), quant.F32, 0, 0)
	}
	out["tensors"] = r.pad(32).Bytes()

	r = (&raw{}).header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(uint64(n)) // empty strings
	for range n {
		r.u64(0)
	}
	out["strings"] = r.Bytes()

	r = (&raw{}).header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(uint64(n)) // empty arrays
	for range n {
		r.u32(uint32(TypeUint8)).u64(0)
	}
	out["arrays"] = r.Bytes()

	r = (&raw{}).header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(uint64(n)) // arrays of one bool
	for range n {
		r.u32(uint32(TypeBool)).u64(1).u8(1)
	}
	out["bool-arrays"] = r.Bytes()

	r = (&raw{}).header(3, 0, uint64(n/16)) // keys whose values are nested arrays 16 deep
	for i := range n / 16 {
		r.str(key(i)).u32(uint32(TypeArray))
		for range MaxArrayDepth - 1 {
			r.u32(uint32(TypeArray)).u64(1)
		}
		r.u32(uint32(TypeUint8)).u64(0)
	}
	out["deep"] = r.Bytes()
	return out
}

// allocs returns the bytes allocated by one Read of b, and its error.
func allocs(b []byte) (uint64, error) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	_, err := readBytes(b)
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc, err
}

func allocLimit(size int) uint64 { return allocFactor*uint64(size) + allocSlack }

// TestReadClaimsBounded: tiny files that declare huge counts and lengths are read or
// refused allocating at most allocFactor times their size (plus allocSlack).
func TestReadClaimsBounded(t *testing.T) {
	for _, name := range slices.Sorted(mapKeys(claims())) {
		b := claims()[name]
		a, err := allocs(b)
		t.Logf("%s: %d bytes, %d allocated (%v)", name, len(b), a, err)
		if a > allocLimit(len(b)) {
			t.Errorf("%s: reading %d bytes allocated %d bytes, limit %d (%v)", name, len(b), a, allocLimit(len(b)), err)
		}
	}
}

// TestReadWorstBounded: the valid files of the most, smallest records allocate at most
// allocFactor times their size, and their read time is linear in it: the CPU time per byte
// of a file of 16 times the records is less than 4 times that of the small one (a
// quadratic reader would take 16 times; measured: within 2 times).
func TestReadWorstBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("times reads for about 1.5 s")
	}
	const n = 1000
	small, large := worst(n), worst(16*n)
	for _, name := range slices.Sorted(mapKeys(small)) {
		var perByte [2]float64
		for i, b := range [][]byte{small[name], large[name]} {
			a, err := allocs(b)
			perByte[i] = float64(a) / float64(len(b))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if a > allocLimit(len(b)) {
				t.Errorf("%s: reading %d bytes allocated %d bytes (%.1f per byte), limit %d", name, len(b), a, float64(a)/float64(len(b)), allocLimit(len(b)))
			}
		}
		ts, tl := readTime(small[name]), readTime(large[name])
		ps, pl := float64(ts)/float64(len(small[name])), float64(tl)/float64(len(large[name]))
		t.Logf("%s: %d bytes in %v (%.1f ns/byte, %.1f bytes allocated per byte), %d bytes in %v (%.1f ns/byte, %.1f B/B)",
			name, len(small[name]), ts, ps, perByte[0], len(large[name]), tl, pl, perByte[1])
		if pl > 4*ps {
			t.Errorf("%s: %.1f ns per byte of %d bytes, %.1f of %d bytes: not linear", name, ps, len(small[name]), pl, len(large[name]))
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readTime is the CPU time of one read of b: the average over as many reads as take 50
// ms of this thread's CPU time (at least three), which other processes of a busy machine do
// not disturb.
func readTime(b []byte) time.Duration {
	runtime.GC()
	var total time.Duration
	n := 0
	for n < 3 || total < 50*time.Millisecond {
		total += threadTime(func() { _, _ = readBytes(b) })
		n++
	}
	return total / time.Duration(n)
}

// BenchmarkReadWorst reads the worst inputs: the generated files of the most, smallest
// records (about 16000 records each), the huge claims, and the three committed FuzzRead corpus
// files that allocate the most per byte. b.SetBytes makes MB/s comparable across inputs.
func BenchmarkReadWorst(b *testing.B) {
	inputs := map[string][]byte{}
	for name, f := range worst(16000) {
		inputs[name] = f
	}
	for name, f := range claims() {
		inputs["claim-"+name] = f
	}
	type scored struct {
		name  string
		b     []byte
		score float64
	}
	var corpus []scored
	paths, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzRead", "*"))
	for _, p := range paths {
		f, err := corpusBytes(p)
		if err != nil || len(f) == 0 {
			continue
		}
		a, _ := allocs(f)
		corpus = append(corpus, scored{"corpus-" + filepath.Base(p), f, float64(a) / float64(len(f))})
	}
	slices.SortFunc(corpus, func(x, y scored) int { return -cmpFloat(x.score, y.score) })
	for _, c := range corpus[:min(3, len(corpus))] {
		inputs[c.name] = c.b
	}
	for _, name := range slices.Sorted(mapKeys(inputs)) {
		f := inputs[name]
		b.Run("input="+name, func(b *testing.B) {
			b.SetBytes(int64(len(f)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = readBytes(f)
			}
		})
	}
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// corpusBytes decodes a fuzz corpus file of one []byte value ("go test fuzz v1").
func corpusBytes(p string) ([]byte, error) {
	c, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitN(string(c), "\n", 3)
	if len(lines) < 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
		return nil, fmt.Errorf("%s: not a one-[]byte corpus file", p)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	return []byte(s), err
}
