//go:build !(goexperiment.simd && amd64)

package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/tiling"
)

// rows8For returns nil: this build (without GOEXPERIMENT=simd on amd64) computes every
// output with the scalar vec_dots.
func rows8For(t quant.Type, k tiling.Kernel, ncols int) rows8Factory { return nil }

// Rows8 reports whether this build and CPU run some vec_dots eight rows at a time.
func Rows8() bool { return false }
