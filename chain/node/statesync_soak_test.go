package node

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestSoakStateSyncVsReplay records issue 15's benchmark row "full node
// catching up a chain of ≥ 100,000 blocks: snapshot sync vs block replay"
// (a figure, not a goal): a one-validator network runs to
// COWBOY_SOAK_BLOCKS heights (default 100,000), then one fresh full node
// catches up by block sync from genesis and another by state sync, each
// until it holds the validator's head at the start of its run.
//
//	COWBOY_SOAK=1 COWBOY_SOAK_BLOCKS=100000 go test -run SoakStateSync -timeout 6h ./chain/node
func TestSoakStateSyncVsReplay(t *testing.T) {
	if os.Getenv("COWBOY_SOAK") == "" {
		t.Skip("soak: set COWBOY_SOAK=1 (make soak)")
	}
	blocks := uint64(100_000)
	if v, err := strconv.ParseUint(os.Getenv("COWBOY_SOAK_BLOCKS"), 10, 64); err == nil && v > 0 {
		blocks = v
	}
	nw := newOneValidatorNet(t, 1_000_000)
	val := nw.validator(t)
	val.cfg.BlockInterval, val.cfg.MinBlockGap = time.Millisecond, time.Millisecond
	val.cfg.Network.Tick = 2 * time.Millisecond
	val.cfg.Network.SnapshotInterval = int64(max(blocks/10, 10))
	run(t, val)
	start := time.Now()
	deadline := time.Now().Add(6 * time.Hour)
	for head(t, val).Height < blocks {
		if time.Now().After(deadline) {
			t.Fatal("validator too slow")
		}
		time.Sleep(time.Second)
	}
	t.Logf("validator built %d blocks in %v", head(t, val).Height, time.Since(start).Round(time.Second))

	target := head(t, val).Height
	replay := nw.fullNode(t)
	start = time.Now()
	run(t, replay)
	waitLong(t, func() bool { return head(t, replay).Height >= target })
	replayTook := time.Since(start)

	target = head(t, val).Height
	synced := nw.stateSyncNode(t, t.TempDir())
	start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := synced.StateSync(ctx); err != nil {
		t.Fatal(err)
	}
	restored := head(t, synced).Height
	run(t, synced)
	waitLong(t, func() bool { return head(t, synced).Height >= target })
	syncTook := time.Since(start)
	t.Logf("catch-up to %d blocks: block replay %v, state sync %v (snapshot at %d, then %d blocks), ratio %.1fx",
		target, replayTook.Round(time.Millisecond), syncTook.Round(time.Millisecond), restored, target-restored, float64(replayTook)/float64(syncTook))
}

func waitLong(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(6 * time.Hour)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
