package ggmlsrc

//go:generate go run gen_hashes.go -ggml $GGML_DIR

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Commit is the ggml commit whose kernels ggsim models.
const Commit = "d99724f2b141"

// The build of Commit whose arithmetic ggsim reproduces: the SASS the float sequences
// were read from and the tables (MUFU.RCP) were measured with.
const (
	Toolkit = "CUDA 13.0.88"                                     // nvcc of the build
	Arch    = "sm_90"                                            // CMAKE_CUDA_ARCHITECTURES=90
	Flags   = "-use_fast_math"                                   // ggml's CUDA_FLAGS (src/ggml-cuda/CMakeLists.txt)
	Device  = "NVIDIA H200 (cc 9.0, 132 SMs), driver 580.159.04" // where the measurements ran
)

// paths is the fixed list (doc.go says why each is there), sorted.
var paths = []string{
	"include/ggml.h",
	"src/ggml-common.h",
	"src/ggml-cuda/CMakeLists.txt",
	"src/ggml-cuda/common.cuh",
	"src/ggml-cuda/convert.cu",
	"src/ggml-cuda/ggml-cuda.cu",
	"src/ggml-cuda/mma.cuh",
	"src/ggml-cuda/mmf.cu",
	"src/ggml-cuda/mmf.cuh",
	"src/ggml-cuda/mmid.cu",
	"src/ggml-cuda/mmid.cuh",
	"src/ggml-cuda/mmq-config-ampere.cuh",
	"src/ggml-cuda/mmq-config-blackwell.cuh",
	"src/ggml-cuda/mmq-config-cdna.cuh",
	"src/ggml-cuda/mmq-config-pascal.cuh",
	"src/ggml-cuda/mmq-config-rdna2.cuh",
	"src/ggml-cuda/mmq-config-rdna3-5.cuh",
	"src/ggml-cuda/mmq-config-rdna3.cuh",
	"src/ggml-cuda/mmq-config-rdna4.cuh",
	"src/ggml-cuda/mmq-load-tiles.cuh",
	"src/ggml-cuda/mmq-vec-dot.cuh",
	"src/ggml-cuda/mmq.cu",
	"src/ggml-cuda/mmq.cuh",
	"src/ggml-cuda/mmvf.cu",
	"src/ggml-cuda/mmvf.cuh",
	"src/ggml-cuda/mmvq.cu",
	"src/ggml-cuda/mmvq.cuh",
	"src/ggml-cuda/quantize.cu",
	"src/ggml-cuda/quantize.cuh",
	"src/ggml-cuda/vecdotq.cuh",
	"src/ggml-cuda/vendors/cuda.h",
	"src/ggml-impl.h",
	"src/ggml-quants.c",
	"src/ggml.c",
}

// Paths returns the kernel source files the fingerprint covers, relative to the ggml
// directory, sorted.
func Paths() []string { return slices.Clone(paths) }

// Absent is the hash text of a listed file that a tree does not have.
const Absent = "absent"

// FileHash is one file's hash: SHA256 is 64 lowercase hex digits, or Absent.
type FileHash struct {
	Path   string
	SHA256 string
}

// String is the line form "PATH HEX" (or "PATH absent").
func (h FileHash) String() string { return h.Path + " " + h.SHA256 }

// ParseLine parses the line form of a FileHash.
func ParseLine(s string) (FileHash, error) {
	i := strings.LastIndexByte(s, ' ')
	if i <= 0 {
		return FileHash{}, fmt.Errorf("ggmlsrc: %q is not \"PATH SHA256\"", s)
	}
	h := FileHash{Path: s[:i], SHA256: s[i+1:]}
	if err := h.check(); err != nil {
		return FileHash{}, err
	}
	return h, nil
}

func (h FileHash) check() error {
	if h.Path == "" || strings.ContainsAny(h.Path, " \n\\") || strings.HasPrefix(h.Path, "/") {
		return fmt.Errorf("ggmlsrc: path %q is not a relative slash path without spaces", h.Path)
	}
	if h.SHA256 != Absent && !IsHex256(h.SHA256) {
		return fmt.Errorf("ggmlsrc: %s: hash %q is neither 64 lowercase hex digits nor %q", h.Path, h.SHA256, Absent)
	}
	return nil
}

// IsHex256 reports whether s is 64 lowercase hex digits (a SHA-256 as this package
// writes it).
func IsHex256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Set is the hashes of a tree's listed files, sorted by path, each path once.
type Set []FileHash

// NewSet checks hs (valid lines, no path twice) and returns them sorted by path.
func NewSet(hs []FileHash) (Set, error) {
	s := slices.Clone(hs)
	slices.SortFunc(s, func(a, b FileHash) int { return strings.Compare(a.Path, b.Path) })
	for i, h := range s {
		if err := h.check(); err != nil {
			return nil, err
		}
		if i > 0 && s[i-1].Path == h.Path {
			return nil, fmt.Errorf("ggmlsrc: %s is listed twice", h.Path)
		}
	}
	return s, nil
}

// ParseLines parses the line forms of a set (golden.ggml.kernel_files).
func ParseLines(lines []string) (Set, error) {
	hs := make([]FileHash, len(lines))
	for i, l := range lines {
		h, err := ParseLine(l)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i, err)
		}
		hs[i] = h
	}
	return NewSet(hs)
}

// Lines returns the line forms in order.
func (s Set) Lines() []string {
	l := make([]string, len(s))
	for i, h := range s {
		l[i] = h.String()
	}
	return l
}

// Fingerprint is the SHA-256 of the lines, each followed by "\n", in lowercase hex.
func (s Set) Fingerprint() string {
	d := sha256.New()
	for _, h := range s {
		d.Write([]byte(h.String() + "\n"))
	}
	return hex.EncodeToString(d.Sum(nil))
}

// Diff returns the paths whose hashes differ between s and t, a path in only one of
// them included, sorted.
func (s Set) Diff(t Set) []string {
	m := map[string]string{}
	for _, h := range s {
		m[h.Path] = h.SHA256
	}
	var d []string
	for _, h := range t {
		if v, ok := m[h.Path]; !ok || v != h.SHA256 {
			d = append(d, h.Path)
		}
		delete(m, h.Path)
	}
	for p := range m {
		d = append(d, p)
	}
	slices.Sort(d)
	return d
}

// Modelled returns the hashes of the listed files of ggml at Commit.
func Modelled() Set { return slices.Clone(modelled) }

// ModelledFingerprint is Modelled().Fingerprint().
func ModelledFingerprint() string { return modelled.Fingerprint() }

// HashDir hashes the listed files of the ggml tree at dir (the directory holding src/
// and include/). A listed file the tree lacks is recorded as Absent; a dir that has
// none of them, or a file that cannot be read, is an error.
func HashDir(dir string) (Set, error) {
	if _, err := os.Stat(filepath.Join(dir, "src", "ggml-cuda")); err != nil {
		hint := ""
		if _, err2 := os.Stat(filepath.Join(dir, "ggml", "src", "ggml-cuda")); err2 == nil {
			hint = fmt.Sprintf(" (a llama.cpp tree? give %s)", filepath.Join(dir, "ggml"))
		}
		return nil, fmt.Errorf("ggmlsrc: %s is not a ggml source tree with a CUDA backend: no src/ggml-cuda%s", dir, hint)
	}
	s := make(Set, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s[i] = FileHash{p, Absent}
		case err != nil:
			return nil, fmt.Errorf("ggmlsrc: %w", err)
		default:
			sum := sha256.Sum256(b)
			s[i] = FileHash{p, hex.EncodeToString(sum[:])}
		}
	}
	return s, nil
}
