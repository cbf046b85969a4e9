package joblane

import (
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// OpSubmitJob is the Job Dispatcher's actor op: runtime.submit_job(spec)
// returns the 32-byte job id. The escrow (max_price + tip) moves from the
// actor's balance to the dispatcher's account.
const OpSubmitJob = "submit_job"

// SubmitJobCycles is the host-call cost of submit_job (jobs.SubmitJobCycles);
// it also charges one cell per byte of the encoded spec, and SubmitJob
// charges the prepaid callback (OffchainParams.CallbackCycles / CallbackCells).
const SubmitJobCycles = jobs.SubmitJobCycles

// submitJobOp serves runtime.submit_job. Errors leave no state change.
func (l *Lane) submitJobOp(h *actors.Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
	x := h.Exec()
	if req.ReadOnly || x.ReadOnly() {
		return nil, fmt.Errorf("%s in a read-only call", req.Op)
	}
	spec, err := specFromArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("submit_job: %w", err)
	}
	if spec.Callback.Actor == ([20]byte{}) {
		spec.Callback.Actor = h.Actor()
	}
	if err := gateJob(h, spec); err != nil { // spec 002 §15 syscall gate
		return nil, err
	}
	mark := x.Mark()
	id, err := l.jobs.With(x).SubmitJob(h.Actor(), spec)
	if err != nil {
		x.Rollback(mark)
		if actors.IsFailure(err) {
			return nil, fmt.Errorf("submit_job: %v", err)
		}
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	enc, _ := spec.Encode()
	return &pvm.HostResponse{Value: id[:], Cycles: SubmitJobCycles, Cells: uint64(len(enc))}, nil
}

// specFromArgs builds a JobSpec from the keyword arguments of
// runtime.submit_job: either spec=<canonical CBOR JobSpec bytes> or the
// fields job_type, input, max_price, tip, timeout_blocks, handler (the
// callback handler; the callback actor is the caller unless callback_actor
// is given), runners, mode, quorum_bps, vote_field, max_tokens,
// max_wall_time_ms, max_memory_bytes, max_return_bytes,
// expected_execution_ms, data_format, json_schema, required_domains,
// tee_required, toolchain_digest, required_runner_pool, similarity_ppm,
// embedding_dim. Submitter, submitted_at and job_id are set by the chain.
func specFromArgs(raw any) (*job.JobSpec, error) {
	m, err := actors.HostArgs(raw)
	if err != nil {
		return nil, err
	}
	if b, ok := m["spec"]; ok {
		bs, isB := b.([]byte)
		if !isB || len(m) != 1 {
			return nil, errors.New("spec must be the only argument, as bytes")
		}
		return job.DecodeJobSpec(bs)
	}
	known := []string{"job_type", "input", "max_price", "tip", "timeout_blocks", "handler", "callback_actor", "runners", "mode",
		"quorum_bps", "vote_field", "max_tokens", "max_wall_time_ms", "max_memory_bytes", "max_return_bytes",
		"expected_execution_ms", "data_format", "json_schema", "required_domains", "tee_required", "toolchain_digest",
		"required_runner_pool", "similarity_ppm", "embedding_dim"}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the error text reaches the receipt: report deterministically
	for _, k := range keys {
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("unknown field %q", k)
		}
	}
	u := func(k string, def, maxV uint64) uint64 {
		x, ok := m[k]
		if !ok || x == nil || err != nil {
			return def
		}
		n, isU := x.(uint64)
		if !isU || n > maxV {
			err = fmt.Errorf("%s must be an int in 0..%d", k, maxV)
		}
		return n
	}
	bigv := func(k string) *big.Int {
		x, ok := m[k]
		if !ok || x == nil || err != nil {
			return new(big.Int)
		}
		switch n := x.(type) {
		case uint64:
			return new(big.Int).SetUint64(n)
		case big.Int:
			return &n
		case *big.Int:
			return n
		}
		err = fmt.Errorf("%s must be a non-negative int", k)
		return new(big.Int)
	}
	bs := func(k string) []byte {
		x, ok := m[k]
		if !ok || x == nil || err != nil {
			return nil
		}
		switch b := x.(type) {
		case []byte:
			return b
		case string:
			return []byte(b)
		}
		err = fmt.Errorf("%s must be bytes or str", k)
		return nil
	}
	str := func(k string) string {
		x, ok := m[k]
		if !ok || x == nil || err != nil {
			return ""
		}
		s, isS := x.(string)
		if !isS {
			err = fmt.Errorf("%s must be a str", k)
		}
		return s
	}
	s := &job.JobSpec{
		JobType: job.JobType(u("job_type", uint64(job.JobTypeHTTP), 255)),
		Bounds: job.ResourceBounds{MaxTokens: u("max_tokens", 0, ^uint64(0)), MaxWallTimeMs: u("max_wall_time_ms", 10_000, ^uint64(0)),
			MaxMemoryBytes: u("max_memory_bytes", 64<<20, ^uint64(0))},
		Verification: job.VerificationConfig{Mode: job.VerificationMode(u("mode", uint64(job.ModeMajorityVote), 255)),
			Runners: uint8(u("runners", 3, 255)), QuorumBps: uint16(u("quorum_bps", 0, 10_000)), VoteField: str("vote_field"),
			SimilarityPpm: uint32(u("similarity_ppm", 0, 1_000_000)), EmbeddingDim: uint16(u("embedding_dim", 0, 4096))},
		MaxPrice: bigv("max_price"), Tip: bigv("tip"), TimeoutBlocks: u("timeout_blocks", 20, ^uint64(0)),
		Callback: job.CallbackInfo{Handler: str("handler")},
		ResultSchema: job.ResultSchema{MaxReturnBytes: uint32(u("max_return_bytes", 4096, 65_536)),
			ExpectedExecutionMs: u("expected_execution_ms", 1_000, ^uint64(0)), DataFormat: job.DataFormatKind(u("data_format", uint64(job.FormatJSON), 255)),
			JSONSchema: bs("json_schema")},
		Input:              bs("input"),
		RequiredRunnerPool: bs("required_runner_pool"),
	}
	if t, ok := m["tee_required"]; ok {
		b, isB := t.(bool)
		if !isB {
			return nil, errors.New("tee_required must be a bool")
		}
		s.TEERequired = b
	}
	if a := bs("callback_actor"); a != nil {
		if len(a) != 20 {
			return nil, errors.New("callback_actor must be 20 bytes")
		}
		copy(s.Callback.Actor[:], a)
	}
	if d := bs("toolchain_digest"); d != nil {
		if len(d) != 32 {
			return nil, errors.New("toolchain_digest must be 32 bytes")
		}
		copy(s.ToolchainDigest[:], d)
	}
	if d, ok := m["required_domains"]; ok && d != nil {
		l, isL := d.([]any)
		if !isL {
			return nil, errors.New("required_domains must be a list of str")
		}
		for _, e := range l {
			es, isS := e.(string)
			if !isS {
				return nil, errors.New("required_domains must be a list of str")
			}
			s.RequiredDomains = append(s.RequiredDomains, es)
		}
		slices.Sort(s.RequiredDomains)
		s.RequiredDomains = slices.Compact(s.RequiredDomains)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// gateJob is the syscall gate of submit_job (spec 002 §15).
func gateJob(h *actors.Host, spec *job.JobSpec) error {
	m, err := h.Requires()
	if err != nil {
		return err
	}
	return m.CheckJob(OpSubmitJob, spec.JobType, spec.RequiredDomains)
}
