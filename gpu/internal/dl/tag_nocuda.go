//go:build !cuda

package dl

const cudaTag = false
