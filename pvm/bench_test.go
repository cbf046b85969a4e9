package pvm

import (
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func reportLatency(b *testing.B, lat []time.Duration) {
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
}

// BenchmarkCall measures one SDK handler call (storage read+write, event)
// through the pool: fork of a fresh child, protocol, host calls, exit.
func BenchmarkCall(b *testing.B) {
	e := engine(b)
	h := newMemHost()
	call(b, e, h, sdkCounter, "", nil, true)
	inv := &Invocation{Actor: addr(1), Handler: "increment", Code: []byte(sdkCounter), CyclesLimit: 1_000_000, CellsLimit: 100_000}
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := time.Now()
		out, err := e.Execute(ctx, inv, h)
		if err != nil || out.Err != nil {
			b.Fatalf("call: %v %v", err, out.Err)
		}
		lat = append(lat, time.Since(st))
	}
	reportLatency(b, lat)
}

// BenchmarkCallParallel runs calls from several goroutines at once.
func BenchmarkCallParallel(b *testing.B) {
	e := engine(b)
	ctx := context.Background()
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(2)
	b.RunParallel(func(pb *testing.PB) {
		h := newMemHost()
		inv := &Invocation{Actor: addr(1), Handler: "get_count", Code: []byte(plainCounter), CyclesLimit: 1_000_000, CellsLimit: 100_000}
		call(b, e, h, plainCounter, "", nil, true)
		for pb.Next() {
			st := time.Now()
			out, err := e.Execute(ctx, inv, h)
			if err != nil || out.Err != nil {
				b.Errorf("call: %v %v", err, out.Err)
				return
			}
			d := time.Since(st)
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}
	})
	reportLatency(b, lat)
}

// BenchmarkValidate measures a validation call (fresh child, AST checks).
func BenchmarkValidate(b *testing.B) {
	e := engine(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if _, err := e.Validate(ctx, []byte(detActor)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMeteredVsPlain runs the same CPU-bound code plainly and metered
// (the real transformer and runtime) on this CPython and reports the ratio
// of CPU times. The script is run once whatever b.N is (it times itself).
func BenchmarkMeteredVsPlain(b *testing.B) {
	e := engine(b)
	for i := 0; i < 1; i++ {
		out, err := exec.Command(e.cfg.Python, "-S", "-B", "testdata/meter_ratio.py", filepath.Join(e.dir, "src")).CombinedOutput()
		if err != nil {
			b.Fatalf("meter_ratio: %v\n%s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) != 5 {
				continue
			}
			ratio, _ := strconv.ParseFloat(f[3], 64)
			b.ReportMetric(ratio, f[0]+"-x")
		}
		b.Logf("\n%s", out)
	}
}
