package cbfs_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

type mutDir struct {
	mu     sync.Mutex
	relays []cbfs.RelayInfo
}

func (d *mutDir) Relays(context.Context) ([]cbfs.RelayInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]cbfs.RelayInfo(nil), d.relays...), nil
}

func (d *mutDir) setHealthy(id cbfs.RelayID, h bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.relays {
		if d.relays[i].ID == id {
			d.relays[i].Healthy = h
		}
	}
}

func TestRepairUnhealthyAndCorrupt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := startCluster(t, 8, 0)
	dir := &mutDir{relays: append([]cbfs.RelayInfo(nil), cl.dir...)}
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, dir, &cbfs.MemAnchor{})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(rand.New(rand.NewPCG(3, 3)), 100_000)
	if _, err := vol.Put(ctx, "/a", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	m, _ := vol.Manifest(ctx)
	seg0 := m.Files[0].Segments[0]
	// Corrupt shard 0 of segment 0 on disk, mark the relay of shard 1 unhealthy.
	var corrupted cbfs.RelayID
	for _, n := range cl.nodes {
		if cbfs.RelayID(n.ID()) == seg0.Shards[0].Relay {
			p := n.Store().Path(vol.ID(), seg0.Shards[0].ID)
			b, _ := os.ReadFile(p)
			b[10] ^= 0xff
			os.WriteFile(p, b, 0o600)
			corrupted = cbfs.RelayID(n.ID())
		}
	}
	dir.setHealthy(seg0.Shards[1].Relay, false)
	var got bytes.Buffer
	if _, err := vol.Get(ctx, "/a", &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read with corrupt+unhealthy: %v", err)
	}
	rep, err := vol.Repair(ctx, cbfs.RepairOptions{Audit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair: %+v", rep)
	if rep.Repaired < 2 || rep.Failed != 0 || rep.Version == 0 {
		t.Fatalf("repair report %+v", rep)
	}
	m2, _ := vol.Manifest(ctx)
	s2 := m2.Files[0].Segments[0]
	if s2.Shards[0].Relay == corrupted || s2.Shards[1].Relay == seg0.Shards[1].Relay {
		t.Fatal("placement not updated")
	}
	seen := map[cbfs.RelayID]bool{}
	for _, sh := range s2.Shards {
		if seen[sh.Relay] {
			t.Fatal("two shards of a segment on one relay")
		}
		seen[sh.Relay] = true
	}
	// A second audit finds nothing to do.
	rep, err = vol.Repair(ctx, cbfs.RepairOptions{Audit: true})
	if err != nil || rep.Bad != 0 {
		t.Fatalf("second pass %+v %v", rep, err)
	}
	got.Reset()
	if _, err := vol.Get(ctx, "/a", &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read after repair: %v", err)
	}
}

func TestRepairerWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := startCluster(t, 7, 0)
	owner, _ := crypto.GenerateKey()
	var rp *cbfs.Repairer
	var mu sync.Mutex
	c, err := cbfs.New(cbfs.Config{Key: owner, Directory: cl.dir, Anchor: &cbfs.MemAnchor{}, OnShardFailure: func(f cbfs.ShardFault) {
		mu.Lock()
		defer mu.Unlock()
		if rp != nil {
			rp.Report(f)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(rand.New(rand.NewPCG(5, 5)), 20_000)
	if _, err := vol.Put(ctx, "/w", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	m, _ := vol.Manifest(ctx)
	sh := m.Files[0].Segments[1].Shards[0] // a data shard: always read first
	for _, n := range cl.nodes {
		if cbfs.RelayID(n.ID()) == sh.Relay {
			os.WriteFile(n.Store().Path(vol.ID(), sh.ID), []byte("garbage"), 0o600)
		}
	}
	mu.Lock()
	rp = cbfs.NewRepairer(vol, cbfs.RepairOptions{MaxBytesPerSecond: 1 << 20}, time.Hour)
	mu.Unlock()
	wctx, wcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rp.Run(wctx) }()
	defer func() { wcancel(); <-done }()
	var got bytes.Buffer
	if _, err := vol.Get(ctx, "/w", &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("get: %v", err)
	}
	for rp.Last().Repaired == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("repairer did not repair the reported shard")
		case <-time.After(20 * time.Millisecond):
		}
	}
	m2, _ := vol.Manifest(ctx)
	if m2.Files[0].Segments[1].Shards[0].Relay == sh.Relay {
		t.Fatal("shard still placed on the relay that corrupted it")
	}
}
