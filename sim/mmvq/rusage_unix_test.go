//go:build unix

package mmvq

import "syscall"

// cpuSeconds returns the user+system CPU time of this process so far (the benchmarks
// report it per op besides the wall time: on a loaded machine it varies less).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
