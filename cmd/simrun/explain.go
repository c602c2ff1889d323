package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("explain", flag.ContinueOnError)
	fl.SetOutput(stderr)
	devName := fl.String("device", "H200", "device name from `simrun devices`")
	typName := fl.String("type", "q4_K", "ggml type of the weights")
	m := fl.Int64("m", 1, "columns of src1 (tokens)")
	k := fl.Int64("k", 4096, "K: values per weight row")
	n := fl.Int64("n", 4096, "N: weight rows")
	experts := fl.Int64("experts", 0, "number of experts (MUL_MAT_ID) or 0 for MUL_MAT")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	dev, err := sim.Lookup(*devName)
	if err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return 2
	}
	t, err := quant.ParseType(*typName)
	if err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return 2
	}
	if *m <= 0 || *k <= 0 || *n <= 0 || *experts < 0 {
		fmt.Fprintln(stderr, "simrun: --m, --k and --n must be positive and --experts non-negative")
		return 2
	}
	if _, err := t.RowSize(*k); err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return 2
	}
	fmt.Fprintf(stdout, "device: %s (cc %d, %d SMs, warp %d, smpbo %d KiB)\n", dev.Name, dev.CC, dev.SMCount, dev.WarpSize, dev.SmemPerBlockOptin/1024)
	var d tiling.Decision
	if *experts > 0 {
		fmt.Fprintf(stdout, "op: MUL_MAT_ID %v, K=%d, N=%d, %d experts, %d tokens\n", t, *k, *n, *experts, *m)
		d = tiling.MulMatID(dev, t, tiling.Shape{K: *k, N: *n, M: *m, Experts: *experts})
	} else {
		fmt.Fprintf(stdout, "op: MUL_MAT %v, K=%d, N=%d, M=%d\n", t, *k, *n, *m)
		d = tiling.MulMat(dev, t, tiling.Shape{K: *k, N: *n, M: *m})
	}
	fmt.Fprintf(stdout, "kernel: %s (%s)\nwhy: %s\n", d.Kernel, d.Kernel.GGMLName(), d.Reason)
	return 0
}

func cmdDevices(stdout io.Writer) int {
	for _, d := range sim.Catalog() {
		fmt.Fprintf(stdout, "%-14s %-8s cc %-8d %4d SMs  warp %2d  smpbo %3d KiB  dp4a=%-5v int8mma=%-5v  %s\n",
			d.Name, d.Vendor, d.CC, d.SMCount, d.WarpSize, d.SmemPerBlockOptin/1024, d.DP4A, d.Int8MMA, d.Source)
	}
	return 0
}
