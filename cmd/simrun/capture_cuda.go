//go:build cuda && cgo

package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gpu/ggml"
)

func cmdCapture(args []string, stdout, stderr io.Writer) int {
	a, code, ok := parseCapture(args, stdout, stderr)
	if !ok {
		return code
	}
	meta := ggml.Meta{Commit: a.commit, Build: a.build, Kernel: a.kernel}
	lib, err := ggml.Load(a.ggmlDir)
	if err != nil {
		fmt.Fprintln(stderr, "simrun capture:", err)
		return 1
	}
	spec := ggml.BackendSpec{Kind: ggml.CUDA, Device: a.device}
	if a.cpu {
		spec = ggml.BackendSpec{Kind: ggml.CPU}
	}
	be, err := lib.NewBackend(spec)
	if err != nil {
		fmt.Fprintln(stderr, "simrun capture:", err)
		return 1
	}
	defer be.Close()
	plan := ggml.Plan{Types: a.types, K: a.k, N: a.n, Batches: a.batches, QuantRows: a.quantRows, Seed: a.seed, Repeat: a.repeat}
	if a.defaultedTypes {
		plan.Types = slices.Clone(ggml.MMVQTypes)
	}
	for _, m := range a.moe {
		plan.MoE = append(plan.MoE, ggml.MoEShape{E: m[0], U: m[1], T: m[2], B1: m[3]})
	}
	w, sum, err := ggml.Capture(plan, be, lib, meta)
	if err != nil {
		fmt.Fprintln(stderr, "simrun capture:", err)
		return 1
	}
	if err := w.WriteFile(a.out); err != nil {
		fmt.Fprintln(stderr, "simrun capture:", err)
		return 1
	}
	if a.json {
		fp := ""
		if meta.Kernel != nil {
			fp = meta.Kernel.Fingerprint()
		}
		return captureCLI.writeJSON(stdout, stderr, struct {
			Backend  string `json:"backend"`
			Device   string `json:"device"`
			CC       int    `json:"cc"`
			SMs      int    `json:"sms"`
			MulMat   int    `json:"mul_mat"`
			MulMatID int    `json:"mul_mat_id"`
			Quantize int    `json:"quantize"`
			Tensors  int    `json:"tensors"`
			Out      string `json:"out"`
			Kernel   string `json:"kernel_fingerprint,omitempty"`
		}{spec.String(), sum.Device.Name, sum.Device.CC, sum.Device.SMCount, sum.MulMat, sum.MulMatID, sum.Quantize, sum.Tensors, a.out, fp}, exitOK)
	}
	if meta.Kernel != nil {
		fmt.Fprintf(stdout, "capture: kernel fingerprint %s of %s (modelled: %s)\n", meta.Kernel.Fingerprint(), a.ggmlSrc, ggmlsrc.ModelledFingerprint())
	}
	fmt.Fprintf(stdout, "capture: %s on %s (cc %d, %d SMs): %d mul_mat, %d mul_mat_id, %d quantize cases, %d tensors -> %s\n",
		spec, sum.Device.Name, sum.Device.CC, sum.Device.SMCount, sum.MulMat, sum.MulMatID, sum.Quantize, sum.Tensors, a.out)
	return 0
}
