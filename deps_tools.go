//go:build tools

package ggsim

import (
	_ "github.com/gpustack/gguf-parser-go"
	_ "github.com/stretchr/testify/require"
	_ "github.com/x448/float16"
	_ "gonum.org/v1/gonum/mat"
	_ "pgregory.net/rapid"
)
