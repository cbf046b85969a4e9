package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
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

// takenChain refuses transaction "a" as a pool does whose sender already
// has another transaction pending at that nonce, and takes the others.
type takenChain struct {
	fullChain
	mu   sync.Mutex
	took []string
}

func (c *takenChain) Prepare(_ context.Context, workers, _ int) ([][][]wireTx, error) {
	return [][][]wireTx{{{{id: "a"}, {id: "b"}}}}, nil
}

func (c *takenChain) Submit(_ context.Context, _ int, tx wireTx) (bool, string, error) {
	if tx.id == "a" {
		return false, "replacement_underpriced", nil
	}
	c.mu.Lock()
	c.took = append(c.took, tx.id)
	c.mu.Unlock()
	return true, "", nil
}

// A sender refused replacement_underpriced moves on to its next nonce, as
// a wallet does: its nonce is taken. The generator used to resend the same
// transaction until it was refused nonce_too_low, stalling the sender.
func TestTakenNonceMovesOn(t *testing.T) {
	ch := &takenChain{}
	cfg := loadConfig{Workers: 1, Rate: 200, Duration: 200 * time.Millisecond}
	res, err := run(context.Background(), ch, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.took) != 1 || ch.took[0] != "b" || res.RefusedBy["replacement_underpriced"] != 1 {
		t.Fatalf("accepted %v, refused %v; want b accepted after one refusal of a", ch.took, res.RefusedBy)
	}
	if res.Nodes[0].StaleFirst != 1 {
		t.Fatalf("stale first nonces %d, want 1", res.Nodes[0].StaleFirst)
	}
}

// Each sender's nonces start from its pending nonce at the node it
// submits through (worker w submits through node w mod nodes), not at
// node 0, whose pool may lack transactions it was gossiped.
func TestPrepareNoncesFromSendersNode(t *testing.T) {
	var urls []string
	for _, pending := range []uint64{5, 9} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(apitypes.Account{PendingNonce: pending})
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	c := newCowboy(urls, 4, slog.New(slog.NewTextHandler(io.Discard, nil)))
	c.chainID, c.maxFee = 1, 10
	queues, err := c.Prepare(context.Background(), 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for w, slots := range queues {
		for _, slot := range slots {
			tx, err := types.DecodeTx(slot[0].body)
			if err != nil {
				t.Fatal(err)
			}
			if want := []uint64{5, 9}[w%len(urls)]; tx.Nonce() != want {
				t.Fatalf("worker %d (node %d): first nonce %d, want %d", w, w%len(urls), tx.Nonce(), want)
			}
		}
	}
}
