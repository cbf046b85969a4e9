package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// sealKeyLabel derives the runner's enclave X25519 seal key from its result
// key seed, so a restart presents the same key the chain recorded.
const sealKeyLabel = "cowboy-runner-seal-v1"

// ensureAttested submits evidence to the TEE Verifier when the runner has an
// attester and the chain holds no valid attestation for its current result
// key (or it expires within `margin` blocks).
func (d *Daemon) ensureAttested(ctx context.Context, margin uint64) error {
	if d.o.Attester == nil {
		return nil
	}
	pub := d.o.ResultKey.Public().(ed25519.PublicKey)
	a, err := d.client.Attestation(ctx, d.self)
	if err != nil && !errors.Is(err, sdk.ErrNotFound) {
		return fmt.Errorf("look up attestation: %w", err)
	}
	if err == nil && a.Valid && bytes.Equal(a.ResultKey, pub) && a.ExpiresAt > a.Height+margin {
		return nil
	}
	seal, err := attest.SealKeyFromSeed(d.o.ResultKey.Seed(), sealKeyLabel)
	if err != nil {
		return err
	}
	d.txMu.Lock()
	tx, err := d.client.SubmitAttestation(ctx, d.o.Key, d.o.Attester, pub, seal.PublicKey().Bytes(), sdk.TxOptions{})
	d.txMu.Unlock()
	if err != nil {
		d.m.txs.WithLabelValues("attest", "failed").Inc()
		return fmt.Errorf("submit attestation: %w", err)
	}
	d.m.txs.WithLabelValues("attest", "sent").Inc()
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	r, err := d.client.WaitForReceipt(wctx, tx.Hash())
	if err != nil {
		return fmt.Errorf("attestation receipt: %w", err)
	}
	if r.Receipt.Status != "success" {
		return fmt.Errorf("attestation refused by the TEE Verifier: %s", r.Receipt.Error)
	}
	d.log.Info("attested", "backend", d.o.Attester.Backend(), "tx", tx.Hash())
	return nil
}

// attestResult records per-job evidence that this runner's enclave produced
// the committed result (tee_required jobs). Best effort: the commitment
// stands either way, and the verifier decides what missing evidence costs.
func (d *Daemon) attestResult(ctx context.Context, rec *JobRecord) {
	if d.o.Attester == nil {
		return
	}
	d.txMu.Lock()
	_, err := d.client.SubmitResultAttestation(ctx, d.o.Key, d.o.Attester, rec.ID, types.Keccak256(rec.Result), sdk.TxOptions{})
	d.txMu.Unlock()
	if err != nil {
		d.m.txs.WithLabelValues("attest_result", "failed").Inc()
		d.log.Warn("result attestation failed", "job", rec.ID, "err", err)
		return
	}
	d.m.txs.WithLabelValues("attest_result", "sent").Inc()
}
