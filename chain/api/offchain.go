package api

import (
	"errors"
	"fmt"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/payment"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerOffchainRoutes(v1 *gin.RouterGroup) {
	v1.GET("/runners", s.runners)
	v1.GET("/runners/:addr", s.runner)
	v1.GET("/jobs/:id", s.job)
	v1.GET("/offchain/params", s.offchainParams)
	v1.GET("/runners/:addr/delegations", s.runnerDelegations)
	v1.GET("/jobs/:id/selection", s.jobSelection)
	v1.GET("/offchain/actors/:addr", s.callbackStats)
	v1.GET("/unbonding/:addr", s.unbonding)
	v1.GET("/entitlements/:addr", s.entitlements)
	v1.GET("/entitlements/:addr/check", s.entitlementCheck)
}

// heartbeatTimeout is the governed heartbeat_timeout_blocks in v.
func (s *Server) heartbeatTimeout(v *store.View) (uint64, error) {
	return s.b.Params().Get(v, runners.KeyHeartbeatTimeout)
}

func (s *Server) offchainParams(c *gin.Context) {
	p := s.b.OffchainParams()
	if err := s.b.View(func(v *store.View) (err error) {
		if p.HeartbeatTimeout, err = s.heartbeatTimeout(v); err != nil {
			return err
		}
		gov := map[string]*uint64{runners.KeyUnbondingBlocks: &p.UnbondingBlocks, runners.KeyMinSelfBondBps: &p.MinSelfBondBps}
		for k, dst := range gov {
			if *dst, err = s.b.Params().Get(v, k); err != nil {
				return err
			}
		}
		var n uint64
		if n, err = s.b.Params().Get(v, runners.KeyMaxDelegators); err != nil {
			return err
		}
		p.MaxDelegators = uint32(n)
		if n, err = s.b.Params().Get(v, runners.KeyMaxTranches); err != nil {
			return err
		}
		p.MaxTranches = int(n)
		return nil
	}); err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, apitypes.OffchainParams{MinRunnerStake: decStr(p.MinRunnerStake), HeartbeatTimeoutBlocks: p.HeartbeatTimeout,
		AggregatorTimeoutBlocks: p.Job.AggregatorTimeoutBlocks, RevealTimeoutBlocks: p.Job.RevealTimeoutBlocks,
		ChallengeWindowBlocks: p.Job.ChallengeWindowBlocks, MaxRetries: p.Job.MaxRetries,
		ChallengeBond: decStr(p.ChallengeBond), SlashBps: p.SlashBps, ChallengerBps: p.ChallengerBps, UnbondingBlocks: p.UnbondingBlocks,
		MinSelfBondBps: p.MinSelfBondBps, MaxDelegators: p.MaxDelegators, MaxTranches: p.MaxTranches})
}

func decStr(v *big.Int) string {
	if v == nil {
		return "0"
	}
	return v.String()
}

func runnerJSON(r *runners.Runner, height, heartbeatTimeout uint64) apitypes.Runner {
	status := "active"
	if r.Status != runners.RunnerActive {
		status = "exited"
	}
	out := apitypes.Runner{Address: r.Address, ResultKey: r.ResultKey, JobTypes: []string{}, Models: r.Models, Domains: r.Domains,
		TEE: r.TEE, Rates: apitypes.RateCard{Base: decStr(r.Rates.Base), PerToken: decStr(r.Rates.PerToken),
			PerWallMs: decStr(r.Rates.PerWallMs), PerMemoryMiB: decStr(r.Rates.PerMemoryMiB)},
		MaxConcurrentJobs: r.MaxConcurrentJobs, ActiveJobs: r.ActiveJobs, MaxJobValue: decStr(r.MaxJobValue),
		Stake: decStr(r.Stake), Reputation: r.Reputation, RegisteredAt: r.RegisteredAt, LastHeartbeat: r.LastHeartbeat,
		Status: status, Healthy: r.Healthy(height, heartbeatTimeout), Height: height,
		Delegated: decStr(r.Delegated), EffectiveStake: decStr(r.EffectiveStake()), Delegators: r.Delegators,
		CommissionBps: r.CommissionBps, ConsecutiveSlashes: r.ConsecutiveSlashes}
	for _, t := range r.JobTypes {
		out.JobTypes = append(out.JobTypes, t.String())
	}
	if out.Models == nil {
		out.Models = []string{}
	}
	if out.Domains == nil {
		out.Domains = []string{}
	}
	return out
}

func (s *Server) runners(c *gin.Context) {
	out := []apitypes.Runner{}
	params := s.b.OffchainParams()
	err := s.b.View(func(v *store.View) error {
		timeout, err := s.heartbeatTimeout(v)
		if err != nil {
			return err
		}
		rs, err := runners.ListRunners(v)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if c.Query("all") != "true" && r.Status != runners.RunnerActive {
				continue
			}
			rj := runnerJSON(r, v.Head().Height, timeout)
			rj.Eligible = r.Status == runners.RunnerActive && params.StakeEligible(r)
			if rj.Endpoint, err = runners.ReadRunnerEndpoint(v, r.Address); err != nil {
				return err
			}
			out = append(out, rj)
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) runner(c *gin.Context) {
	addr, ok := parseAddress(c, c.Param("addr"))
	if !ok {
		return
	}
	var out apitypes.Runner
	params := s.b.OffchainParams()
	err := s.b.View(func(v *store.View) error {
		timeout, err := s.heartbeatTimeout(v)
		if err != nil {
			return err
		}
		r, err := runners.ReadRunner(v, addr)
		if err != nil {
			return err
		}
		if r == nil {
			return errors.Join(store.ErrNotFound, fmt.Errorf("no runner %s", addr))
		}
		out = runnerJSON(r, v.Head().Height, timeout)
		out.Eligible = r.Status == runners.RunnerActive && params.StakeEligible(r)
		out.Endpoint, err = runners.ReadRunnerEndpoint(v, addr)
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

var failReasons = map[job.FailReason]string{job.FailNoCandidates: "no_candidates", job.FailTimeout: "timeout",
	job.FailVerification: "verification", job.FailNoReveal: "no_reveal", job.FailChallenged: "challenged"}

var outcomes = map[uint8]string{uint8(payment.Success): "success", uint8(payment.RunnerFault): "runner_fault",
	uint8(payment.ImpossibleJob): "impossible_job", uint8(payment.ActorFault): "actor_fault", uint8(payment.ExternalFault): "external_fault"}

func addrs(a []types.Address) []types.Address {
	if a == nil {
		return []types.Address{}
	}
	return a
}

// JobJSON renders a job record with its verification and settlement.
func JobJSON(j *job.Job, res *jobs.JobResult, pay *jobs.JobPayments, height uint64) apitypes.Job {
	sp := &j.Spec
	out := apitypes.Job{ID: sp.JobID, Status: j.State, FailReason: failReasons[j.Fail], JobType: sp.JobType.String(),
		Mode: sp.Verification.Mode.String(), Submitter: sp.Submitter, SubmittedAt: sp.SubmittedAt, Callback: sp.Callback.Actor,
		Handler: sp.Callback.Handler, MaxPrice: decStr(sp.MaxPrice), Tip: decStr(sp.Tip), Input: sp.Input, Seed: j.Seed,
		CandidateRoot: j.CandidateRoot, Retry: j.Retry, Committee: addrs(j.Runners), Aggregator: j.Aggregator,
		Deadline: j.Deadline, Excluded: addrs(j.Excluded), Commitments: []apitypes.JobCommitment{}, Reveals: []apitypes.JobReveal{},
		ResultHash: j.ResultHash, Agreed: addrs(j.Agreed), Dissented: addrs(j.Dissented), Height: height}
	if out.Input == nil {
		out.Input = types.Bytes{}
	}
	if b, err := sp.Encode(); err == nil {
		out.Spec = b
	}
	for _, cm := range j.Commitments {
		out.Commitments = append(out.Commitments, apitypes.JobCommitment{Runner: cm.Runner, Hash: cm.Hash, Block: cm.Block})
	}
	if res != nil {
		for _, r := range res.Reveals {
			jr := apitypes.JobReveal{Runner: r.Runner, Result: r.Result, Signature: r.Signature}
			if rp := r.Report; rp != nil {
				jr.Report = &apitypes.UsageReport{Tokens: rp.Usage.Tokens, WallTimeMs: rp.Usage.WallTimeMs, MemoryBytes: rp.Usage.MemoryBytes,
					Fault: faultNames[rp.Fault], ProgressBps: rp.ProgressBps}
			}
			out.Reveals = append(out.Reveals, jr)
		}
		if res.Accepted {
			out.Result = res.Result
		}
	}
	if pay != nil {
		p := &apitypes.JobPayments{Outcome: outcomes[pay.Outcome], Payment: decStr(pay.Payment), Refund: decStr(pay.Refund),
			Height: pay.Height, Transfers: []apitypes.JobPayment{}}
		for _, t := range pay.Transfers {
			p.Transfers = append(p.Transfers, apitypes.JobPayment{Kind: t.Kind, To: t.To, Amount: decStr(t.Amount)})
		}
		out.Payments = p
	}
	return out
}

func (s *Server) job(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	var out apitypes.Job
	err = s.b.View(func(v *store.View) error {
		j, err := jobs.ReadJob(v, id)
		if err != nil {
			return err
		}
		if j == nil {
			return errors.Join(store.ErrNotFound, fmt.Errorf("no job %s", id))
		}
		res, err := jobs.ReadJobResult(v, id)
		if err != nil {
			return err
		}
		pay, err := jobs.ReadJobPayments(v, id)
		if err != nil {
			return err
		}
		out = JobJSON(j, res, pay, v.Head().Height)
		cbs, err := s.b.CallbackDeliveries(v, id)
		for _, d := range cbs {
			out.Callbacks = append(out.Callbacks, apitypes.JobCallback{Status: d.Status, Height: d.Height, OK: d.OK, Error: d.Error, Receipt: d.Hash})
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
