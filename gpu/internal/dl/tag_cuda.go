//go:build cuda && !cgo

package dl

const cudaTag = true
