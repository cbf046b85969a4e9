package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/jobmachine"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// registration is the RunnerRegister this runner wants on chain.
func (d *Daemon) registration() *types.RunnerRegister {
	in := &types.RunnerRegister{ResultKey: types.Bytes(d.o.ResultKey.Public().(ed25519.PublicKey)),
		Models: d.o.Models, Domains: d.o.Domains, TEE: d.o.TEE, RateBase: d.o.Rates.Base, RatePerToken: d.o.Rates.PerToken,
		RatePerWallMs: d.o.Rates.PerWallMs, RatePerMemoryMiB: d.o.Rates.PerMemoryMiB, MaxConcurrentJobs: d.o.MaxConcurrentJobs,
		MaxJobValue: d.o.MaxJobValue, Endpoint: d.o.PublicURL}
	for _, t := range d.o.JobTypes {
		in.JobTypes = append(in.JobTypes, uint64(t))
	}
	return in
}

// upToDate reports whether the chain record matches what we would register.
func (d *Daemon) upToDate(r *apitypes.Runner, in *types.RunnerRegister) bool {
	if r.Status != "active" || !bytes.Equal(r.ResultKey, in.ResultKey) || r.TEE != in.TEE || r.Endpoint != in.Endpoint ||
		r.MaxConcurrentJobs != uint32(in.MaxConcurrentJobs) {
		return false
	}
	var types_ []string
	for _, t := range in.JobTypes {
		types_ = append(types_, job.JobType(t).String())
	}
	slices.Sort(types_)
	have := slices.Clone(r.JobTypes)
	slices.Sort(have)
	if !slices.Equal(have, types_) || !sameSet(r.Models, in.Models) || !sameSet(r.Domains, in.Domains) {
		return false
	}
	for _, p := range []struct {
		have string
		want *big.Int
	}{{r.Rates.Base, in.RateBase}, {r.Rates.PerToken, in.RatePerToken}, {r.Rates.PerWallMs, in.RatePerWallMs},
		{r.Rates.PerMemoryMiB, in.RatePerMemoryMiB}, {r.MaxJobValue, in.MaxJobValue}} {
		w := p.want
		if w == nil {
			w = new(big.Int)
		}
		if p.have != w.String() {
			return false
		}
	}
	stake, err := sdk.ParseAmount(r.Stake)
	return err == nil && stake.Cmp(d.o.Stake) >= 0
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// ensureRegistered registers the runner, or updates its record and tops up
// its stake when the configuration changed.
func (d *Daemon) ensureRegistered(ctx context.Context) error {
	in := d.registration()
	for attempt := 0; ; attempt++ {
		r, err := d.client.Runners().Get(ctx, d.self)
		if err != nil && !errors.Is(err, sdk.ErrNotFound) {
			return fmt.Errorf("look up runner record: %w", err)
		}
		if err == nil && d.upToDate(r, in) {
			d.setRegistered(r)
			d.log.Info("registered", "runner", d.self, "stake", r.Stake, "endpoint", r.Endpoint, "reputation", r.Reputation)
			return nil
		}
		if attempt > 0 {
			return errors.New("registration sent but the chain record does not match the configuration")
		}
		topUp := new(big.Int).Set(d.o.Stake)
		if err == nil && r.Status == "active" {
			have, _ := sdk.ParseAmount(r.Stake)
			if have != nil {
				topUp.Sub(topUp, have)
			}
			if topUp.Sign() < 0 {
				topUp.SetInt64(0)
			}
		}
		bal, err := d.client.Chain().Balance(ctx, d.self)
		if err != nil {
			return fmt.Errorf("balance of %s: %w", d.self, err)
		}
		if bal.Cmp(topUp) <= 0 {
			return fmt.Errorf("account %s holds %s CBY; registering needs %s CBY of stake plus fees — fund it first", d.self, sdk.FormatCBY(bal), sdk.FormatCBY(topUp))
		}
		d.log.Info("registering", "runner", d.self, "stake_added", sdk.FormatCBY(topUp), "endpoint", in.Endpoint)
		rc, err := d.sendAndWait(ctx, "register", types.RunnerRegistryAddress, topUp, in)
		if err != nil {
			return fmt.Errorf("register: %w", err)
		}
		if rc.Status != "success" {
			return fmt.Errorf("register: transaction failed: %s", rc.Error)
		}
	}
}

func (d *Daemon) setRegistered(r *apitypes.Runner) {
	d.mu.Lock()
	d.registered = true
	d.lastHeartbeat = r.LastHeartbeat
	d.mu.Unlock()
	if s, err := sdk.ParseAmount(r.Stake); err == nil {
		d.m.stake.Set(cbyFloat(s))
	}
	d.m.reputation.Set(float64(r.Reputation))
}

func cbyFloat(v *big.Int) float64 {
	f, _ := new(big.Rat).SetFrac(v, big.NewInt(1e18)).Float64()
	return f
}

// maybeHeartbeat sends a heartbeat every third of heartbeat_timeout_blocks
// (at least every block) and refreshes the stake and lag gauges.
func (d *Daemon) maybeHeartbeat(ctx context.Context, h uint64) {
	every := d.heartbeatEvery()
	d.mu.Lock()
	due := d.registered && h >= d.lastHeartbeat+every
	if due {
		d.lastHeartbeat = h // one attempt per interval even if it fails
	}
	d.mu.Unlock()
	if !due {
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if _, err := d.send(cctx, "heartbeat", types.RunnerRegistryAddress, nil, &types.RunnerHeartbeat{}); err != nil {
			d.log.Warn("heartbeat failed", "err", err)
		}
		if err := d.ensureAttested(cctx, every*3); err != nil {
			d.log.Warn("re-attestation failed", "err", err)
		}
		if r, err := d.client.Runners().Get(cctx, d.self); err == nil {
			d.m.heartbeatLag.Set(float64(r.Height - min(r.Height, r.LastHeartbeat)))
			d.m.reputation.Set(float64(r.Reputation))
			if s, err := sdk.ParseAmount(r.Stake); err == nil {
				d.m.stake.Set(cbyFloat(s))
			}
			if r.Status != "active" {
				d.log.Error("the Runner Registry lists this runner as exited; restart to re-register", "runner", d.self)
			}
		}
	}()
}

// heartbeatEvery is the heartbeat interval: a third of the chain's
// heartbeat_timeout_blocks, at least one block.
func (d *Daemon) heartbeatEvery() uint64 {
	return max(d.paramsSnapshot().HeartbeatTimeoutBlocks/3, 1)
}

// build signs a system-actor instruction with the next local nonce
// (txSender); every built transaction goes to d.tx.submitted.
func (d *Daemon) build(ctx context.Context, kind string, to types.Address, value *big.Int, in types.Instruction) (*types.Tx, error) {
	return d.tx.build(ctx, kind, to, value, in, d.Height, d.waitBlock)
}

// send builds and submits a transaction that needs no persistence
// (heartbeats, registration).
func (d *Daemon) send(ctx context.Context, kind string, to types.Address, value *big.Int, in types.Instruction) (types.Hash, error) {
	tx, err := d.build(ctx, kind, to, value, in)
	if err != nil {
		d.m.txs.WithLabelValues(kind, "failed").Inc()
		return types.Hash{}, err
	}
	h, err := d.client.Chain().Submit(ctx, tx)
	d.tx.submitted(tx, err)
	if err != nil {
		d.m.txs.WithLabelValues(kind, "failed").Inc()
		return h, err
	}
	d.m.txs.WithLabelValues(kind, "sent").Inc()
	return h, nil
}

func (d *Daemon) sendAndWait(ctx context.Context, kind string, to types.Address, value *big.Int, in types.Instruction) (*apitypes.Receipt, error) {
	h, err := d.send(ctx, kind, to, value, in)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	r, err := d.client.Chain().WaitForReceipt(wctx, h)
	if err != nil {
		return nil, err
	}
	return r.Receipt, nil
}

// sendPersisted builds the transaction for rec's next effect, stores it in
// rec with state `next` (fsynced), and only then submits it. A crash
// between the two leaves a record that persistedTx re-submits byte for
// byte, so the effect is never built twice. Jobs build, persist and submit
// concurrently: only the nonce is taken under the sender's lock.
func (d *Daemon) sendPersisted(ctx context.Context, rec *JobRecord, kind string, next JobState, to types.Address, in types.Instruction) error {
	tx, err := d.build(ctx, kind, to, nil, in)
	if err != nil {
		d.m.txs.WithLabelValues(kind, "failed").Inc()
		return fmt.Errorf("build %s: %w", kind, err)
	}
	rec.Tx, rec.TxHash, rec.TxKind, rec.State = tx.Encode(), tx.Hash(), kind, next
	if err := d.put(rec); err != nil {
		d.tx.submitted(tx, err) // never sent: its nonce is a hole to refill
		return err
	}
	_, err = d.client.Chain().Submit(ctx, tx)
	d.tx.submitted(tx, err)
	if err != nil {
		// The record holds the tx; the await step re-sends or rebuilds.
		d.m.txs.WithLabelValues(kind, "failed").Inc()
		d.log.Warn("submit failed; will retry", "job", rec.ID, "kind", kind, "err", err)
		return nil
	}
	d.m.txs.WithLabelValues(kind, "sent").Inc()
	return nil
}

// journalFloor is one past the highest nonce of a transaction journaled in
// an unfinished job: signed and persisted, perhaps never sent, so the
// sender must not give its nonce to another transaction.
func journalFloor(recs []*JobRecord) uint64 {
	var floor uint64
	for _, r := range recs {
		if r.State.Terminal() || len(r.Tx) == 0 {
			continue
		}
		if tx, err := types.DecodeTx(r.Tx); err == nil {
			floor = max(floor, tx.Nonce()+1)
		}
	}
	return floor
}

// txState is what the node knows of a persisted transaction.
type txState = jobmachine.TxState

const (
	txUnknown = jobmachine.TxUnknown // not in the mempool nor a block: lost
	txPending = jobmachine.TxPending // in the mempool
	txSuccess = jobmachine.TxSuccess // included, succeeded
	txFailed  = jobmachine.TxFailed  // included, failed
)

// persistedTx checks rec.Tx and re-submits it when the node lost it. It
// returns txUnknown only when re-submission was refused (a stale nonce): the
// caller must rebuild.
func (d *Daemon) persistedTx(ctx context.Context, rec *JobRecord, kind string) (txState, string, error) {
	r, err := d.client.Chain().Tx(ctx, rec.TxHash)
	switch {
	case err == nil && r.Status == apitypes.TxIncluded && r.Receipt != nil:
		d.tx.observe(kind, rec.Tx, r.Receipt)
		if r.Receipt.Status == "success" {
			return txSuccess, "", nil
		}
		return txFailed, r.Receipt.Error, nil
	case err == nil:
		return txPending, "", nil
	case !errors.Is(err, sdk.ErrNotFound):
		return txPending, "", err // node trouble: try again next block
	}
	_, err = d.client.Chain().SubmitRaw(ctx, rec.Tx)
	if err != nil {
		d.tx.refused()
		d.log.Warn("re-sending stored transaction refused; rebuilding", "job", rec.ID, "kind", kind, "err", err)
		return txUnknown, err.Error(), nil
	}
	d.m.txs.WithLabelValues(kind, "resent").Inc()
	return txPending, "", nil
}

func (d *Daemon) put(rec *JobRecord) error {
	rec.UpdatedAt = time.Now()
	if err := d.store.PutJob(rec); err != nil {
		return fmt.Errorf("persist job %s: %w", rec.ID, err)
	}
	return nil
}
