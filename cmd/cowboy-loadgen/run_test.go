package main

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// fullChain refuses every transaction as a full pool does.
type fullChain struct{ submits atomic.Int64 }

func (c *fullChain) Setup(context.Context) error { return nil }

func (c *fullChain) Prepare(_ context.Context, workers, _ int) ([][][]wireTx, error) {
	out := make([][][]wireTx, workers)
	for w := range out {
		out[w] = [][]wireTx{{{id: "tx", body: []byte{1}}}}
	}
	return out, nil
}

func (c *fullChain) Submit(context.Context, int, wireTx) (bool, string, error) {
	c.submits.Add(1)
	return false, "pool_full", nil
}

func (c *fullChain) Final(context.Context) (uint64, error) { return 0, nil }

func (c *fullChain) Block(context.Context, uint64) (time.Time, []string, error) {
	return time.Time{}, nil, nil
}

// A closed-loop worker refused for load waits refusedBackoff before it
// sends again instead of spinning: over a point of length d, each of the
// workers sends at most d/refusedBackoff + 1 times, however fast the
// machine (without the back-off a refusing chain in memory takes millions).
func TestClosedLoopBacksOffWhenRefused(t *testing.T) {
	ch := &fullChain{}
	cfg := loadConfig{Workers: 4, Duration: 200 * time.Millisecond}
	res, err := run(context.Background(), ch, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	limit := int64(cfg.Workers) * (int64(cfg.Duration/refusedBackoff) + 1)
	n := ch.submits.Load()
	if n > limit {
		t.Fatalf("%d submissions in a %s closed-loop point from %d workers; want at most %d", n, cfg.Duration, cfg.Workers, limit)
	}
	if int64(res.RefusedBy["pool_full"]) != n || res.Accepted != 0 {
		t.Fatalf("%d submissions, result %+v", n, res)
	}
}
