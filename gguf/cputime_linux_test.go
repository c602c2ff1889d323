package gguf

import (
	"runtime"
	"syscall"
	"time"
)

// threadTime runs f on one locked OS thread and returns the CPU time that thread spent:
// unlike the wall clock, it does not count the time other processes of a busy machine take.
func threadTime(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_THREAD, &r0)
	f()
	_ = syscall.Getrusage(syscall.RUSAGE_THREAD, &r1)
	return time.Duration(syscall.TimevalToNsec(r1.Utime)+syscall.TimevalToNsec(r1.Stime)) -
		time.Duration(syscall.TimevalToNsec(r0.Utime)+syscall.TimevalToNsec(r0.Stime))
}
