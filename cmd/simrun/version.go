package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/ggsim/ggsim/ggmlsrc"
)

// versionReport is what simrun version prints (--json: this, as JSON).
type versionReport struct {
	GGMLCommit        string   `json:"ggml_commit"`        // the ggml commit whose kernels ggsim models
	KernelFingerprint string   `json:"kernel_fingerprint"` // ggmlsrc.ModelledFingerprint
	KernelFiles       []string `json:"kernel_files"`       // "PATH SHA256" per file of the fingerprint
	Toolkit           string   `json:"toolkit"`            // the toolkit the arithmetic was read from
	Arch              string   `json:"arch"`               // the architecture it was compiled for
	Flags             string   `json:"flags"`              // the compile flags that matter to the arithmetic
	MeasuredOn        string   `json:"measured_on"`        // the GPU the tables were measured on
	Go                string   `json:"go"`                 // the Go toolchain of this binary
	GGSim             string   `json:"ggsim,omitempty"`    // this binary's module version or VCS revision, if known
}

func versionInfo() versionReport {
	r := versionReport{
		GGMLCommit:        ggmlsrc.Commit,
		KernelFingerprint: ggmlsrc.ModelledFingerprint(),
		KernelFiles:       ggmlsrc.Modelled().Lines(),
		Toolkit:           ggmlsrc.Toolkit,
		Arch:              ggmlsrc.Arch,
		Flags:             ggmlsrc.Flags,
		MeasuredOn:        ggmlsrc.Device,
		Go:                runtime.Version(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		r.GGSim = buildVersion(bi)
	}
	return r
}

// buildVersion is the module version, or else the VCS revision (+ "-modified" for a
// dirty tree), or "" if the build recorded neither.
func buildVersion(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-modified"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

const versionHelp = `usage: simrun version [--json] [--files]

Prints what this ggsim models and where its arithmetic comes from: the ggml commit, the
fingerprint of that commit's kernel sources (golden files of other commits with this
fingerprint are verified too), the toolkit, architecture and flags of the build whose
SASS and measured tables the arithmetic reproduces, and the Go toolchain.

flags:
  --json    print it as JSON (with the per-file hashes)
  --files   also list the kernel source files and their SHA-256

example:
  simrun version --files

Exit status: 0 (2 for a usage error).
`

var versionCLI = cli{name: "version", help: func() string { return versionHelp }}

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("version", flag.ContinueOnError)
	asJSON := fl.Bool("json", false, "")
	files := fl.Bool("files", false, "")
	if _, code, ok := versionCLI.parse(fl, args, stdout, stderr); !ok {
		return code
	}
	r := versionInfo()
	if *asJSON {
		return versionCLI.writeJSON(stdout, stderr, r, exitOK)
	}
	fmt.Fprintf(stdout, "ggml commit:        %s (the kernels ggsim models)\n", r.GGMLCommit)
	fmt.Fprintf(stdout, "kernel fingerprint: %s (%d source files", r.KernelFingerprint, len(r.KernelFiles))
	if *files {
		fmt.Fprintln(stdout, "):")
		for _, l := range r.KernelFiles {
			fmt.Fprintf(stdout, "  %s\n", l)
		}
	} else {
		fmt.Fprintln(stdout, "; --files lists them)")
	}
	fmt.Fprintf(stdout, "arithmetic from:    %s, %s, %s; measured on %s\n", r.Toolkit, r.Arch, r.Flags, r.MeasuredOn)
	fmt.Fprintf(stdout, "go:                 %s\n", r.Go)
	if r.GGSim != "" {
		fmt.Fprintf(stdout, "ggsim:              %s\n", r.GGSim)
	}
	return 0
}
