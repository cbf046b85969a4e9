package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/jobmachine"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// maxPushBytes bounds a pushed result: 64 KiB of result (the largest
// max_return_bytes) in base64 plus the signature and an embedding.
const maxPushBytes = 512 << 10

// PushPath is the aggregator route committee members POST their reveal to.
func PushPath(id types.Hash) string { return "/v1/jobs/" + id.String() + "/results" }

// listen starts the aggregator API and the metrics/health endpoint.
func (d *Daemon) listen() ([]*http.Server, error) {
	var out []*http.Server
	start := func(addr string, h http.Handler) (net.Addr, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, s := range out {
				s.Close()
			}
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
		out = append(out, s)
		go s.Serve(ln)
		return ln.Addr(), nil
	}
	var err error
	if d.o.AggregatorListen != "" {
		if d.aggAddr, err = start(d.o.AggregatorListen, d.aggregatorHandler()); err != nil {
			return nil, err
		}
		if d.o.PublicURL == "" {
			d.o.PublicURL = "http://" + d.aggAddr.String()
		}
		d.log.Info("aggregator API listening", "addr", d.aggAddr, "public_url", d.o.PublicURL)
	}
	if d.o.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(d.m.reg, promhttp.HandlerOpts{}))
		mux.HandleFunc("GET /healthz", d.healthz)
		if d.metricsAddr, err = start(d.o.MetricsListen, mux); err != nil {
			return nil, err
		}
		d.log.Info("metrics listening", "addr", d.metricsAddr)
	}
	return out, nil
}

// Health is the body of GET /healthz.
type Health struct {
	Status     string        `json:"status"` // ok | starting | stale
	Runner     types.Address `json:"runner"`
	Height     uint64        `json:"height"`
	Registered bool          `json:"registered"`
	InFlight   int           `json:"in_flight"`
	LastBlock  string        `json:"last_block_age"`
}

// healthz is 200 while the runner is registered and has seen a block in
// the last 30 seconds, 503 otherwise.
func (d *Daemon) healthz(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	h := Health{Status: "ok", Runner: d.self, Height: d.height, Registered: d.registered, InFlight: len(d.active)}
	age := time.Since(d.lastBlockAt)
	seen := !d.lastBlockAt.IsZero()
	d.mu.Unlock()
	code := http.StatusOK
	switch {
	case !h.Registered || !seen:
		h.Status, code = "starting", http.StatusServiceUnavailable
	case age > 30*time.Second:
		h.Status, code = "stale", http.StatusServiceUnavailable
	}
	if seen {
		h.LastBlock = age.Round(time.Millisecond).String()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(h)
}

type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func fail(c *gin.Context, status int, code, msg string) {
	var e apiError
	e.Error.Code, e.Error.Message = code, msg
	c.AbortWithStatusJSON(status, e)
}

func (d *Daemon) aggregatorHandler() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	r.GET("/healthz", func(c *gin.Context) { d.healthz(c.Writer, c.Request) })
	r.POST("/v1/jobs/:id/results", d.handlePush)
	r.GET("/v1/jobs/:id", d.handleJob)
	return r
}

// handlePush accepts a committee member's result. The reveal authenticates
// itself: its Ed25519 signature by the member's registered result key covers
// the job id, the member's address and the result, and it must open the
// member's on-chain commitment.
func (d *Daemon) handlePush(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_job_id", err.Error())
		return
	}
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, maxPushBytes+1))
	if err != nil || len(body) > maxPushBytes {
		fail(c, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("a push is at most %d bytes", maxPushBytes))
		return
	}
	var rev verify.Reveal
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rev); err != nil {
		d.m.pushes.WithLabelValues("rejected").Inc()
		fail(c, http.StatusBadRequest, "bad_reveal", "decode reveal: "+err.Error())
		return
	}
	// Cheap local checks first, so unauthenticated requests cost no node
	// queries: the job must be one this runner aggregates, the sender in
	// its committee.
	rec, err := d.store.Job(id)
	if err != nil {
		d.m.pushes.WithLabelValues("retry").Inc()
		fail(c, http.StatusConflict, "not_committed", "this runner has not seen the job's assignment yet; retry")
		return
	}
	if rec.Aggregator != d.self || !slices.Contains(rec.Committee, rev.Runner) {
		d.m.pushes.WithLabelValues("rejected").Inc()
		fail(c, http.StatusMisdirectedRequest, "not_aggregator", "this runner does not aggregate this job for "+rev.Runner.String())
		return
	}
	ctx := c.Request.Context()
	cj, err := d.client.Jobs().Get(ctx, id)
	if errors.Is(err, sdk.ErrNotFound) {
		fail(c, http.StatusNotFound, "unknown_job", "no such job on chain")
		return
	}
	if err != nil {
		fail(c, http.StatusBadGateway, "node_unavailable", err.Error())
		return
	}
	switch {
	case cj.Aggregator != d.self:
		d.m.pushes.WithLabelValues("rejected").Inc()
		fail(c, http.StatusMisdirectedRequest, "not_aggregator", "this runner is not the job's aggregator")
		return
	case !slices.Contains(cj.Committee, rev.Runner):
		d.m.pushes.WithLabelValues("rejected").Inc()
		fail(c, http.StatusForbidden, "not_in_committee", rev.Runner.String()+" is not in the job's committee")
		return
	case cj.Status != job.StateAssigned && cj.Status != job.StateCommitted:
		d.m.pushes.WithLabelValues("rejected").Inc()
		fail(c, http.StatusGone, "aggregation_over", "the job is "+cj.Status.String())
		return
	}
	commitment, ok := commitmentOf(cj, rev.Runner)
	if !ok {
		d.m.pushes.WithLabelValues("retry").Inc()
		fail(c, http.StatusConflict, "not_committed", "no commitment from "+rev.Runner.String()+" on chain yet; retry after it lands")
		return
	}
	keys, err := d.keys(ctx, []types.Address{rev.Runner})
	if err != nil {
		fail(c, http.StatusBadGateway, "node_unavailable", err.Error())
		return
	}
	if err := verify.CheckReveal(id, &rev, commitment, keys[rev.Runner]); err != nil {
		d.m.pushes.WithLabelValues("rejected").Inc()
		fail(c, http.StatusForbidden, "bad_reveal", err.Error())
		return
	}
	if err := d.store.PutPush(id, &rev); err != nil {
		fail(c, http.StatusInternalServerError, "store", err.Error())
		return
	}
	d.m.pushes.WithLabelValues("accepted").Inc()
	d.log.Info("result received", "job", id, "from", rev.Runner)
	c.JSON(http.StatusAccepted, gin.H{"job_id": id, "runner": rev.Runner, "accepted": true})
}

// handleJob shows this runner's record of a job (no results or secrets).
func (d *Daemon) handleJob(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_job_id", err.Error())
		return
	}
	rec, err := d.store.Job(id)
	if err != nil {
		fail(c, http.StatusNotFound, "unknown_job", err.Error())
		return
	}
	pushes, _ := d.store.Pushes(id)
	from := []types.Address{}
	for _, p := range pushes {
		from = append(from, p.Runner)
	}
	c.JSON(http.StatusOK, gin.H{"id": rec.ID, "state": rec.State, "type": rec.Type, "retry": rec.Retry, "aggregator": rec.Aggregator,
		"committee": rec.Committee, "commitment": rec.Commitment, "outcome": rec.Outcome, "error": rec.Error, "exec_error": rec.ExecError,
		"report": rec.Report, "pushes_from": from})
}

// permanentError is an aggregator answer that retrying will not change.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// pushResult POSTs a reveal to an aggregator endpoint.
func pushResult(ctx context.Context, endpoint string, id types.Hash, rev *verify.Reveal, timeout time.Duration) error {
	b, err := json.Marshal(rev)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+PushPath(id), bytes.NewReader(b))
	if err != nil {
		return &permanentError{"bad aggregator endpoint: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusConflict || resp.StatusCode >= 500:
		return fmt.Errorf("aggregator: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	default:
		return &permanentError{fmt.Sprintf("aggregator: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))}
	}
}

// aggregate is the aggregator's step after its own commitment: collect the
// committee's results, verify them exactly as the Result Verifier will,
// and submit. When to verify, submit or leave the job to individual
// reveals is the job machine's decision (Collected, Verified); this loop
// observes the chain and the pushes and performs what it decides.
func (d *Daemon) aggregate(ctx context.Context, rec *JobRecord) error {
	own := rec.Reveal(d.self)
	if err := d.store.PutPush(rec.ID, &own); err != nil {
		return err
	}
	spec, err := rec.DecodedSpec()
	if err != nil {
		return err
	}
	for {
		ev, fx, err := d.collected(ctx, rec, spec)
		if err != nil {
			return err
		}
		if done, err := d.perform(ctx, rec, ev, fx); done || err != nil {
			return err
		}
	}
}

// collected observes the job for the aggregator: the chain's view and,
// while commitments are in, the pushed results the Result Verifier will
// count.
func (d *Daemon) collected(ctx context.Context, rec *JobRecord, spec *job.JobSpec) (jobmachine.Collected, effects, error) {
	cj, ours, err := d.chainJob(ctx, rec)
	if err != nil {
		return jobmachine.Collected{}, effects{}, err
	}
	ev := jobmachine.Collected{Height: cj.Height, Status: cj.Status, Ours: ours, Deadline: cj.Deadline, Commitments: len(cj.Commitments)}
	fx := effects{cj: cj, spec: spec}
	if !ours || cj.Status != job.StateCommitted {
		return ev, fx, nil
	}
	pushes, err := d.store.Pushes(rec.ID)
	if err != nil {
		return ev, fx, err
	}
	var reveals []verify.Reveal
	for _, p := range pushes {
		if _, ok := commitmentOf(cj, p.Runner); ok {
			reveals = append(reveals, p)
		}
	}
	if spec.Verification.Mode == job.ModeDeterministic {
		if reveals, err = d.withResultEvidence(ctx, rec.ID, reveals); err != nil {
			return ev, fx, err
		}
	}
	ev.Reveals, fx.reveals = len(reveals), reveals
	return ev, fx, nil
}

// submitAggregate verifies the collected reveals and steps the machine
// with the outcome: it submits the aggregate, or leaves the job to the
// members' individual reveals.
func (d *Daemon) submitAggregate(ctx context.Context, rec *JobRecord, fx effects, all bool) error {
	cj, reveals := fx.cj, fx.reveals
	sub, out, err := d.submission(ctx, fx.spec, cj.Commitments, reveals)
	if err != nil {
		return err
	}
	if !out.Accepted && !all {
		d.log.Warn("no quorum among the results received; leaving the job to individual reveals", "job", rec.ID,
			"reveals", len(reveals), "of", len(cj.Commitments))
	} else {
		d.log.Info("submitting verified result", "job", rec.ID, "reveals", len(reveals), "of", len(cj.Commitments),
			"accepted", out.Accepted, "agreed", len(out.Agreed), "dissented", len(out.Dissented))
	}
	fx.sub = sub
	_, err = d.perform(ctx, rec, jobmachine.Verified{All: all, Accepted: out.Accepted}, fx)
	return err
}

// withResultEvidence keeps the reveals whose runner has per-job TEE
// evidence for that result on chain: the Result Verifier refuses a
// Deterministic submission counting any other. Members send the evidence
// and wait for it before they push, so normally every push qualifies; one
// that does not yet is left out until it does (or the window closes).
func (d *Daemon) withResultEvidence(ctx context.Context, id types.Hash, reveals []verify.Reveal) ([]verify.Reveal, error) {
	ras, err := d.client.TEE().ResultAttestations(ctx, id)
	if err != nil && !errors.Is(err, sdk.ErrNotFound) {
		return nil, fmt.Errorf("result attestations of job %s: %w", id, err)
	}
	out := reveals[:0:0]
	for _, r := range reveals {
		h := types.Keccak256(r.Result)
		if slices.ContainsFunc(ras, func(ra apitypes.ResultAttestation) bool { return ra.Runner == r.Runner && ra.ResultHash == h }) {
			out = append(out, r)
		}
	}
	return out, nil
}

// submission runs the job's verification mode over the reveals with
// chain/offchain/verify and builds the Submission the chain will recompute.
func (d *Daemon) submission(ctx context.Context, spec *job.JobSpec, cms []apitypes.JobCommitment, reveals []verify.Reveal) (*verify.Submission, *verify.Outcome, error) {
	commits := make([]job.Commitment, 0, len(cms))
	var committee []types.Address
	for _, c := range cms {
		commits = append(commits, job.Commitment{Runner: c.Runner, Hash: c.Hash, Block: c.Block})
		committee = append(committee, c.Runner)
	}
	keys, err := d.keys(ctx, committee)
	if err != nil {
		return nil, nil, err
	}
	out, err := verify.Verify(verify.Input{Spec: spec, Commitments: commits, Keys: keys, Reveals: reveals})
	if err != nil {
		return nil, nil, fmt.Errorf("verify collected results: %w", err)
	}
	slices.SortFunc(reveals, func(a, b verify.Reveal) int { return bytes.Compare(a.Runner[:], b.Runner[:]) })
	return &verify.Submission{Claim: out.Claim(spec.JobID), Reveals: reveals}, &out, nil
}
