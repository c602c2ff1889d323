//go:build !linux

package gguf

import "time"

// threadTime returns the wall time f takes (the thread's CPU time on Linux).
func threadTime(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}
