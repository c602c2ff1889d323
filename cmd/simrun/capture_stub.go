//go:build !(cuda && cgo)

package main

import (
	"flag"
	"fmt"
	"io"
)

func cmdCapture(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("capture", flag.ContinueOnError)
	fl.SetOutput(stderr)
	if _, err := parseCaptureArgs(args, fl); err != nil {
		fmt.Fprintln(stderr, "simrun capture:", err)
		return 2
	}
	fmt.Fprintln(stderr, "simrun capture: this simrun was built without the cuda tag; build it with `go build -tags cuda ./cmd/simrun` (cgo) on a machine that can run ggml")
	return 1
}
