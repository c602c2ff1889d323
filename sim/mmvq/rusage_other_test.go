//go:build !unix

package mmvq

// cpuSeconds is not measured here: the cpu-s/op metric reads 0.
func cpuSeconds() float64 { return 0 }
