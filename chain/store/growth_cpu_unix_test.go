//go:build unix

package store

import (
	"syscall"
	"time"
)

// processCPU is the process's user+system CPU time so far (GC included):
// under a loaded machine a steadier measure than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
