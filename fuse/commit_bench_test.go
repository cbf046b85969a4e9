package fuse_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
)

// TestCommitBench measures the metadata path of the mount with the default
// settings (close commits; checkpoints anchored on chain asynchronously)
// against a local directory in the same run: create+close latency of a
// 1 KiB file, and tar -x of a tree of small files. CBFS_COMMIT_BENCH=1 runs
// it (a few minutes); CBFS_COMMIT_BENCH_FILES sets the tree size (5000).
func TestCommitBench(t *testing.T) {
	if os.Getenv("CBFS_COMMIT_BENCH") == "" {
		t.Skip("set CBFS_COMMIT_BENCH=1 to run the commit benchmarks")
	}
	need(t, "tar", "diff")
	nfiles := 5000
	if s := os.Getenv("CBFS_COMMIT_BENCH_FILES"); s != "" {
		fmt.Sscan(s, &nfiles)
	}
	e := newEnv(t)
	key, _ := e.volume(t)
	cfg := cbfs.Config{Key: key, Directory: onchain.Directory{Client: e.c}, Anchor: &onchain.Anchor{Client: e.c, Key: key}}
	if s := os.Getenv("CBFS_INLINE_MAX"); s != "" {
		fmt.Sscan(s, &cfg.InlineMax)
	}
	if cfg.InlineMax == 0 {
		cfg.InlineMax = cbfs.DefaultInlineMax
	}
	cl, err := cbfs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() }) // after the unmount (cleanups run last-in first-out)
	v, err := cl.CreateVolume(t.Context(), cbfs.VolumeOptions{K: 4, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	_, mnt := mountChecked(t, v, fuse.Options{}, false)

	// create+close of a 1 KiB file
	const n = 300
	lat := func(dir string) (p50, p99 time.Duration) { return latN(t, dir, n) }
	lp50, lp99 := lat(local)
	mp50, mp99 := lat(mnt)

	// tar -x of a tree of small files (sizes like a source tree)
	src := t.TempDir()
	r := rand.New(rand.NewPCG(5, 5))
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for i := 0; i < nfiles; i++ {
		name := fmt.Sprintf("src/d%02d/e%02d/f%05d.c", i%50, (i/50)%10, i)
		size := int(r.ExpFloat64() * 6000)
		if size > 256<<10 {
			size = 256 << 10
		}
		body := make([]byte, size)
		for k := range body {
			body[k] = byte('a' + r.IntN(26))
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(size), ModTime: time.Unix(1_700_000_000, 0), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	tarball := filepath.Join(src, "tree.tar")
	if err := os.WriteFile(tarball, tb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	untar := func(dir string) float64 {
		os.MkdirAll(filepath.Join(dir, "t"), 0o755)
		start := time.Now()
		out, err := exec.Command("tar", "-xf", tarball, "-C", filepath.Join(dir, "t")).CombinedOutput()
		if err != nil {
			t.Fatalf("tar -x in %s: %v\n%s", dir, err, out)
		}
		return float64(nfiles) / time.Since(start).Seconds()
	}
	ltar := untar(local)
	mtar := untar(mnt)
	if out, err := exec.Command("diff", "-r", filepath.Join(local, "t"), filepath.Join(mnt, "t")).CombinedOutput(); err != nil {
		t.Fatalf("diff -r after tar -x: %v\n%.2000s", err, out)
	}

	// create+close against volume size: the same latency in a volume that
	// already holds 10 files and in one that holds 100,000 (issue 13: a
	// commit in a volume of 100,000 files costs about what it costs in one
	// of 10, at most 2x). Each is a fresh mount of a fresh volume.
	const nsize = 200
	sizeLat := map[int][2]time.Duration{}
	for _, files := range []int{10, 100_000} {
		sv, err := cl.CreateVolume(t.Context(), cbfs.VolumeOptions{K: 4, M: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sv.Update(t.Context(), func(m *cbfs.Manifest) error {
			for i := 0; i < files; i++ {
				m.Files = append(m.Files, cbfs.FileEntry{Path: fmt.Sprintf("/pre/d%03d/f%06d", i%1000, i), ModTime: int64(i), Mode: 0o100644})
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		smt, sdir := mountChecked(t, sv, fuse.Options{}, false)
		p50, p99 := latN(t, sdir, nsize)
		sizeLat[files] = [2]time.Duration{p50, p99}
		unmount(t, smt)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "CBFS mount metadata path vs local directory, default options (close commits to a relay majority;\n")
	fmt.Fprintf(&b, "on-chain checkpoint async), 6 in-process relays on loopback, in-process chain node (20ms blocks), K=4 M=2,\n")
	fmt.Fprintf(&b, "inline threshold %d bytes, %d cores shared, %s.\n", cfg.InlineMax, runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, "Load average at the end: %s", la)
	}
	fmt.Fprintf(&b, "Regenerate: CBFS_COMMIT_BENCH=1 go test ./fuse -run TestCommitBench -v -timeout 30m\n\n")
	fmt.Fprintf(&b, "create+close 1 KiB (n=%d)   local p50 %v p99 %v | cbfs p50 %v p99 %v\n", n,
		lp50.Round(time.Microsecond), lp99.Round(time.Microsecond), mp50.Round(time.Microsecond), mp99.Round(time.Microsecond))
	fmt.Fprintf(&b, "tar -x of %d files           local %.0f files/s | cbfs %.0f files/s | cbfs/local %.3f (local is %.1fx faster)\n",
		nfiles, ltar, mtar, mtar/ltar, ltar/mtar)
	s10, s100k := sizeLat[10], sizeLat[100_000]
	fmt.Fprintf(&b, "create+close 1 KiB (n=%d) in a volume of 10 files: p50 %v p99 %v | of 100,000 files: p50 %v p99 %v | ratio p50 %.2f\n", nsize,
		s10[0].Round(time.Microsecond), s10[1].Round(time.Microsecond), s100k[0].Round(time.Microsecond), s100k[1].Round(time.Microsecond),
		float64(s100k[0])/float64(s10[0]))
	t.Log("\n" + b.String())
	_, file, _, _ := runtime.Caller(0)
	if err := os.WriteFile(filepath.Join(filepath.Dir(file), "COMMIT_BENCH.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// latN creates, writes (1 KiB) and closes n new files in dir/c and returns
// the median and 99th percentile of those.
func latN(t *testing.T, dir string, n int) (p50, p99 time.Duration) {
	t.Helper()
	data := make([]byte, 1024)
	os.MkdirAll(filepath.Join(dir, "c"), 0o755)
	var ds []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		f, err := os.OpenFile(filepath.Join(dir, "c", fmt.Sprintf("f%04d", i)), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2], ds[n*99/100]
}
