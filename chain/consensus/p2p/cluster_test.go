package p2p

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/wal"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

type acceptAll struct{}

func (acceptAll) Verify(*consensus.Block, []*consensus.Block) error { return nil }

// TestConsensusOverQUIC runs four validators with real BLS keys, each a
// consensus core driven by a small node loop over its own QUIC transport,
// and waits until every validator has finalized the same blocks.
func TestConsensusOverQUIC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real BLS and QUIC for a few seconds")
	}
	const n, target = 4, 20
	ts := cluster(t, n)
	var vals []consensus.Validator
	for i := range n {
		var a types.Address
		a[0] = byte(i + 1)
		vals = append(vals, consensus.Validator{Address: a, PubKey: testKey(t, byte(i)).PublicKey().Bytes(), Stake: 1})
	}
	vs, err := consensus.NewValidatorSet(vals, consensus.BLS{})
	if err != nil {
		t.Fatal(err)
	}
	genesis := &consensus.Block{Payload: types.Bytes("genesis")}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	start := time.Now()
	var (
		mu    sync.Mutex
		final = make([][]types.Hash, n)
		wg    sync.WaitGroup
		errs  = make(chan error, n)
	)
	for i := range n {
		core, err := consensus.New(consensus.Config{
			ChainID: 7, Validators: vs, Seed: types.Keccak256([]byte("quic")), Self: vals[i].Address,
			Signer: consensus.BLSSigner{Key: testKey(t, byte(i))}, Verifier: consensus.BLS{}, App: acceptAll{},
			Root: genesis, RootQC: consensus.QC{BlockHash: genesis.Hash()}, TimeoutTicks: 50,
		})
		if err != nil {
			t.Fatal(err)
		}
		log, err := wal.Open(filepath.Join(t.TempDir(), "consensus.wal"))
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runNode(ctx, i, core, ts[i], log, func(f consensus.Finalized) bool {
				mu.Lock()
				defer mu.Unlock()
				final[i] = append(final[i], f.Hash)
				if len(final[i]) == target {
					t.Logf("validator %d finalized %d blocks in %v", i, target, time.Since(start).Round(time.Millisecond))
				}
				return len(final[i]) >= target
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < n; i++ {
		for h := range target {
			if final[i][h] != final[0][h] {
				t.Fatalf("validators 0 and %d finalized different blocks at height %d", i, h+1)
			}
		}
	}
}

// runNode is the node loop of docs/CONSENSUS.md §8.4 in miniature.
func runNode(ctx context.Context, self int, core *consensus.Core, tr *Transport, log consensus.Storage, done func(consensus.Finalized) bool) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("validator %d: %w (status %+v)", self, ctx.Err(), core.Status())
		case <-tick.C:
			core.Tick()
		case in := <-tr.Inbound():
			m, err := consensus.DecodeMessage(in.Data)
			if err != nil {
				return err
			}
			if err := core.Step(in.From, m); err != nil {
				return fmt.Errorf("validator %d: step from %d: %w", self, in.From, err)
			}
		}
		for core.HasReady() {
			rd := core.Ready()
			if err := log.Append(rd.Persist...); err != nil {
				return err
			}
			for _, o := range rd.Messages {
				data := o.Msg.Encode()
				var err error
				if o.To == consensus.Broadcast {
					err = tr.Broadcast(ctx, KindConsensus, data)
				} else {
					err = tr.Send(ctx, o.To, KindConsensus, data)
				}
				if err != nil && ctx.Err() == nil {
					return err
				}
			}
			finished := false
			for _, f := range rd.Finalized {
				finished = done(f) || finished
			}
			if k := len(rd.Finalized); k > 0 && rd.Finalized[k-1].Block.Height%10 == 0 {
				if err := log.Compact(rd.Finalized[k-1].Block.Round); err != nil {
					return err
				}
			}
			if rd.Build != nil {
				payload := fmt.Appendf(nil, "block %d by %d", rd.Build.Height, self)
				if err := core.Propose(rd.Build.Round, payload); err != nil && !errors.Is(err, consensus.ErrStale) {
					return err
				}
			}
			if finished {
				// Keep serving the others a little longer, then stop.
				deadline := time.After(2 * time.Second)
				for {
					select {
					case <-deadline:
						return nil
					case <-ctx.Done():
						return nil
					case <-tick.C:
						core.Tick()
					case in := <-tr.Inbound():
						if m, err := consensus.DecodeMessage(in.Data); err == nil {
							_ = core.Step(in.From, m)
						}
					}
					for core.HasReady() {
						rd := core.Ready()
						for _, o := range rd.Messages {
							if o.To == consensus.Broadcast {
								_ = tr.Broadcast(ctx, KindConsensus, o.Msg.Encode())
							}
						}
						if rd.Build != nil {
							_ = core.Propose(rd.Build.Round, []byte("late"))
						}
					}
				}
			}
		}
	}
}
