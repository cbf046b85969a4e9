package cbfs_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestCommitCost measures one single-file commit in a volume of 10 files
// and in one of 100,000 (issue 13 goal: at most 2x), on 6 in-process relays.
// CBFS_COMMIT_COST=1 runs it.
func TestCommitCost(t *testing.T) {
	if os.Getenv("CBFS_COMMIT_COST") == "" {
		t.Skip("set CBFS_COMMIT_COST=1 to measure commit cost against volume size")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	// commit is one single-file commit: through Update (a mutate over a
	// copy of the entry list) or Apply (path operations, what the FUSE
	// mount and Put use).
	median := func(files int, apply bool) time.Duration {
		vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := vol.Update(ctx, func(m *cbfs.Manifest) error {
			for i := 0; i < files; i++ {
				m.Files = append(m.Files, cbfs.FileEntry{Path: fmt.Sprintf("/d%03d/f%06d", i%1000, i), Size: 0, ModTime: int64(i), Mode: 0o100644})
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var ds []time.Duration
		for i := 0; i < 41; i++ {
			p := fmt.Sprintf("/new/%d", i)
			start := time.Now()
			if apply {
				_, err = vol.Apply(ctx, map[string]*cbfs.FileEntry{p: {Path: p, ModTime: 42, Mode: 0o100644}})
			} else {
				_, err = vol.Update(ctx, addFile(p))
			}
			if err != nil {
				t.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	la, _ := os.ReadFile("/proc/loadavg")
	for _, apply := range []bool{false, true} {
		small := median(10, apply)
		large := median(100_000, apply)
		name := map[bool]string{true: "Apply", false: "Update"}[apply]
		t.Logf("single-file commit (%s), median of 41: 10 files %v, 100000 files %v, ratio %.1f", name, small, large, float64(large)/float64(small))
	}
	t.Logf("load average: %s", la)
}
