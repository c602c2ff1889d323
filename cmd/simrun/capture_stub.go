//go:build !(cuda && cgo)

package main

import (
	"fmt"
	"io"
)

func cmdCapture(args []string, stdout, stderr io.Writer) int {
	if _, code, ok := parseCapture(args, stdout, stderr); !ok {
		return code
	}
	fmt.Fprintln(stderr, "simrun capture: this simrun was built without the cuda tag; build it with `go build -tags cuda ./cmd/simrun` (cgo) on a machine that can run ggml")
	return 1
}
