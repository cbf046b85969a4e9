//go:build !unix

package smt

import "time"

// processCPU is unavailable here; the cpu-ns/op metric is then omitted.
func processCPU() time.Duration { return 0 }
