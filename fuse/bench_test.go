package fuse_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
)

type fioResult struct {
	Jobs []struct {
		Read  fioSide `json:"read"`
		Write fioSide `json:"write"`
	} `json:"jobs"`
}

type fioSide struct {
	BWBytes float64 `json:"bw_bytes"`
	IOPS    float64 `json:"iops"`
}

func fio(t *testing.T, dir string, args ...string) fioSide {
	t.Helper()
	cmd := exec.Command("fio", append([]string{"--name=job", "--directory=" + dir, "--output-format=json", "--ioengine=psync"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio %v: %v\n%s", args, err, out)
	}
	var r fioResult
	if err := json.Unmarshal(out, &r); err != nil || len(r.Jobs) == 0 {
		t.Fatalf("fio output: %v\n%s", err, out)
	}
	j := r.Jobs[0]
	if j.Write.BWBytes > 0 {
		return j.Write
	}
	return j.Read
}

func createFiles(t *testing.T, dir string, n int) float64 {
	t.Helper()
	data := make([]byte, 4096)
	os.MkdirAll(filepath.Join(dir, "small"), 0o755)
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, "small", fmt.Sprintf("f%04d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

// TestBench measures the mount against a local directory with fio and
// writes fuse/BENCH.txt. It takes a few minutes: CBFS_FUSE_BENCH=1 runs it.
func TestBench(t *testing.T) {
	if os.Getenv("CBFS_FUSE_BENCH") == "" {
		t.Skip("set CBFS_FUSE_BENCH=1 to run the fio benchmarks")
	}
	need(t, "fio")
	size := "256M"
	if s := os.Getenv("CBFS_FUSE_BENCH_SIZE"); s != "" {
		size = s
	}
	e := newEnv(t)
	key, v0 := e.volume(t)
	_ = v0
	// default 4 MiB segments for the benchmark volume
	v, err := clientFor(t, e.c, key).CreateVolume(t.Context(), cbfs.VolumeOptions{K: 4, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	type row struct {
		name        string
		local, mnt  float64
		unit        string
		description string
	}
	var rows []row
	mb := func(s fioSide) float64 { return s.BWBytes / (1 << 20) }

	seqW := []string{"--rw=write", "--bs=1M", "--size=" + size, "--end_fsync=1", "--filename=seq.bin"}
	seqR := []string{"--rw=read", "--bs=1M", "--size=" + size, "--filename=seq.bin"}
	randR := []string{"--rw=randread", "--bs=4k", "--size=" + size, "--filename=seq.bin", "--direct=1", "--runtime=20", "--time_based"}

	lw := fio(t, local, seqW...)
	exec.Command("sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches").Run()
	lr := fio(t, local, seqR...)
	lrr := fio(t, local, randR...)
	lc := createFiles(t, local, 300)

	mt, dir := mount(t, v, fuse.Options{})
	mw := fio(t, dir, seqW...)
	unmount(t, mt)
	// cold cache: a fresh mount and client fetch every segment from relays
	mt, dir = mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	mrCold := fio(t, dir, seqR...)
	mrWarm := fio(t, dir, seqR...)
	mrr := fio(t, dir, randR...)
	mc := createFiles(t, dir, 300)
	unmount(t, mt)
	mt, dir = mount(t, e.reopen(t, key, v.ID()), fuse.Options{DeferCloseCommit: true})
	mcDeferred := createFiles(t, dir, 300)
	unmount(t, mt)
	mt, dir = mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	mrrCold := fio(t, dir, append(randR[:len(randR)-2:len(randR)-2], "--runtime=20", "--time_based")...)
	unmount(t, mt)

	rows = append(rows,
		row{"seq write 1M (end_fsync)", mb(lw), mb(mw), "MiB/s", "fio --rw=write --bs=1M, upload+commit included"},
		row{"seq read 1M, cold cache", mb(lr), mb(mrCold), "MiB/s", "fresh mount: every segment fetched from relays"},
		row{"seq read 1M, warm cache", mb(lr), mb(mrWarm), "MiB/s", "second pass: local encrypted cache"},
		row{"rand read 4K, warm", lrr.IOPS, mrr.IOPS, "IOPS", "--direct=1, after the sequential passes"},
		row{"rand read 4K, cold", lrr.IOPS, mrrCold.IOPS, "IOPS", "--direct=1, fresh mount: segments fetched on demand"},
		row{"create+write+close 4 KiB files", lc, mc, "files/s", "each close uploads and commits a manifest version on chain"},
		row{"same, DeferCloseCommit", lc, mcDeferred, "files/s", "close uploads; commits batched every CommitDelay"},
	)
	var b strings.Builder
	fmt.Fprintf(&b, "CBFS FUSE mount vs local directory (fio %s, file %s, K=4 M=2, 4 MiB segments,\n", fioVersion(), size)
	fmt.Fprintf(&b, "6 in-process relays on loopback, in-process chain node with 20ms blocks, %d cores shared, %s).\n", runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, "Load average at the end (other engineers' jobs share the machine): %s", la)
	}
	fmt.Fprintf(&b, "Regenerate: CBFS_FUSE_BENCH=1 go test ./fuse -run TestBench -v -timeout 30m\n\n")
	fmt.Fprintf(&b, "%-34s %12s %12s %8s  %s\n", "test", "local", "cbfs", "ratio", "unit / notes")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-34s %12.1f %12.1f %8.3f  %s; %s\n", r.name, r.local, r.mnt, r.mnt/r.local, r.unit, r.description)
	}
	t.Log("\n" + b.String())
	_, file, _, _ := runtime.Caller(0)
	if err := os.WriteFile(filepath.Join(filepath.Dir(file), "BENCH.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fioVersion() string {
	out, _ := exec.Command("fio", "--version").Output()
	return strings.TrimSpace(string(out))
}
