package ggmlsrc_test

import (
	"fmt"

	"github.com/ggsim/ggsim/ggmlsrc"
)

// A golden file records the per-file hashes of its ggml tree; Diff names the kernel
// files that differ from the modelled commit's.
func ExampleSet_Diff() {
	theirs := ggmlsrc.Modelled()
	theirs[0].SHA256 = ggmlsrc.Absent
	fmt.Println(theirs.Fingerprint() == ggmlsrc.ModelledFingerprint())
	fmt.Println(ggmlsrc.Modelled().Diff(theirs))
	// Output:
	// false
	// [include/ggml.h]
}
