//go:build !unix

package store

import "time"

// processCPU is unavailable here; the benchmark logs 0.
func processCPU() time.Duration { return 0 }
