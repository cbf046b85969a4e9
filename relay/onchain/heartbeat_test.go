package onchain

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestHeartbeatFailuresLoggedAndRetried: a relay whose heartbeat
// transactions are accepted by the node but fail on chain (here: it was
// deregistered, NotARelay) must say so at error level on every beat and
// keep trying. Before, Run only submitted them: the failures went
// unnoticed and the registry silently marked the relay unhealthy.
func TestHeartbeatFailuresLoggedAndRetried(t *testing.T) {
	d := nodetest.New(t)
	srv := d.Serve(t, 20*time.Millisecond)
	c := sdk.New(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key, _ := crypto.GenerateKey()
	fund(t, c, types.PubkeyToAddress(key.PublicKey))
	reg := &Registrar{Client: c, Key: key, Addr: "127.0.0.1:7443", Capacity: 1 << 30, Stake: genesis.CBY(100)}
	if err := reg.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if err := reg.Heartbeat(ctx); err != nil {
		t.Fatalf("heartbeat of a registered relay: %v", err)
	}
	tx, err := reg.sendSystem(ctx, &types.RelayDeregister{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := succeeded(ctx, c, tx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := reg.Heartbeat(ctx); !errors.Is(err, sdk.ErrNotARelay) {
		t.Fatalf("heartbeat of a deregistered relay: %v, want ErrNotARelay", err)
	}

	// Run (with the relay active again, then deregistered under it) logs
	// each failed heartbeat as an error and goes on.
	logs := &errorLog{}
	reg.Logger = slog.New(logs)
	reg.Interval = 50 * time.Millisecond
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); reg.Run(rctx) }()
	defer func() { stop(); <-done }()
	for {
		r, err := c.Relays().Get(ctx, reg.ID())
		if err == nil && r.Status == "active" {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("Run did not register the relay again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if tx, err = reg.sendSystem(ctx, &types.RelayDeregister{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := succeeded(ctx, c, tx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for logs.count() < 2 {
		if ctx.Err() != nil {
			t.Fatalf("%d heartbeat failures logged as errors, want at least 2", logs.count())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// errorLog counts the error records whose err attribute wraps
// sdk.ErrNotARelay.
type errorLog struct {
	mu sync.Mutex
	n  int
}

func (l *errorLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *errorLog) WithGroup(string) slog.Handler            { return l }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && errors.Is(err, sdk.ErrNotARelay) {
			l.mu.Lock()
			l.n++
			l.mu.Unlock()
		}
		return true
	})
	return nil
}

func (l *errorLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}
