//go:build !unix

package mmq

// cpuSeconds is not measured here: the cpu-s/op metric reads 0.
func cpuSeconds() float64 { return 0 }
