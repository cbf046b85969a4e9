//go:build unix

package smt

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time consumed by the process so far
// (all threads, so GC work is included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
