package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/jobmachine"
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
	a, err := d.client.TEE().Attestation(ctx, d.self)
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
	// As sdk.SubmitAttestation, but through the daemon's sender (local
	// nonces: the SDK's pending-nonce lookup would collide with them).
	sealPub := seal.PublicKey().Bytes()
	e, err := d.o.Attester.Attest(ctx, attest.ReportDataForKey(d.self, pub, sealPub))
	if err != nil {
		return fmt.Errorf("attest: %w", err)
	}
	ev, err := e.Encode()
	if err != nil {
		return fmt.Errorf("encode evidence: %w", err)
	}
	rc, err := d.sendAndWait(ctx, "attest", types.TEEVerifierAddress, nil, &types.TEEAttest{Evidence: ev, SealKey: bytes.Clone(sealPub)})
	if err != nil {
		return fmt.Errorf("submit attestation: %w", err)
	}
	if rc.Status != "success" {
		return fmt.Errorf("attestation refused by the TEE Verifier: %s", rc.Error)
	}
	d.log.Info("attested", "backend", d.o.Attester.Backend(), "tx", rc.TxHash)
	return nil
}

// needsResultEvidence reports whether the job still needs this runner's
// per-job TEE evidence on chain before its result leaves the runner: a
// tee_required job, on a runner with an attester, not yet attested.
func (d *Daemon) needsResultEvidence(rec *JobRecord) bool {
	if d.o.Attester == nil || rec.ResultAttested {
		return false
	}
	spec, err := rec.DecodedSpec()
	return err == nil && spec.TEERequired
}

// attestResult stores and sends tee_attest_result: evidence from the
// enclave binding (this runner, job, Keccak256(result)). It goes before the
// push to the aggregator and before any reveal, because the Result
// Verifier counts a Deterministic job's result only from runners whose
// evidence is on chain when the result is verified (docs/TEE.md §3). The
// transaction is persisted like the commitment, so a restart waits for the
// same one instead of attesting twice.
func (d *Daemon) attestResult(ctx context.Context, rec *JobRecord) error {
	h := types.Keccak256(rec.Result)
	rd := attest.ReportDataForResult(d.self, rec.ID, h)
	var model types.Hash
	if spec, err := rec.DecodedSpec(); err == nil && spec.ModelID != (types.Hash{}) {
		// A registry model job: the evidence also binds the model run
		// (the job's model, the only one the LLM executor runs for it).
		model = spec.ModelID
		rd = attest.ReportDataForResultModel(d.self, rec.ID, h, model)
	}
	e, err := d.o.Attester.Attest(ctx, rd)
	if err != nil {
		d.m.txs.WithLabelValues("attest_result", "failed").Inc()
		return fmt.Errorf("result evidence: %w", err)
	}
	b, err := e.Encode()
	if err != nil {
		return fmt.Errorf("result evidence: %w", err)
	}
	return d.sendPersisted(ctx, rec, "attest_result", StateAttesting, types.TEEVerifierAddress,
		&types.TEEAttestResult{JobID: rec.ID, ResultHash: h, Evidence: b, ModelHash: model})
}

// awaitResultAttestation waits for the stored tee_attest_result to land,
// then returns the job to committed (push or aggregate). Refused evidence
// ends a Deterministic job for this runner: its result cannot count, and
// pushing it would only get the aggregator's submission refused. Other
// modes do not need the evidence and carry on.
func (d *Daemon) awaitResultAttestation(ctx context.Context, rec *JobRecord) error {
	for {
		st, why, err := d.persistedTx(ctx, rec, "attest_result")
		if err != nil {
			return err
		}
		switch st {
		case txSuccess:
			d.log.Info("result evidence recorded", "job", rec.ID)
		case txFailed:
			d.log.Warn("result evidence refused", "job", rec.ID, "err", why)
		}
		if done, err := d.advance(ctx, rec, jobmachine.TxOutcome{State: st, Why: why}, nil); done || err != nil {
			return err
		}
		if ev, cj, err := d.observeChain(ctx, rec); err == nil {
			if done, err := d.advance(ctx, rec, ev, cj); done || err != nil {
				return err
			}
			continue // advance waited for the next block
		}
		if err := d.waitBlock(ctx); err != nil {
			return err
		}
	}
}
