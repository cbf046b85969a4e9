package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/treasury"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerGovRoutes(v1 *gin.RouterGroup) {
	v1.GET("/gov/proposals", s.govProposals)
	v1.GET("/gov/proposals/:id", s.govProposal)
	v1.GET("/params", s.params)
	v1.GET("/treasury", s.treasury)
	v1.GET("/gov/council", s.council)
}

// council is GET /v1/gov/council: members, threshold, the next action's
// nonce and the circuit-breaks in force.
func (s *Server) council(c *gin.Context) {
	out := apitypes.GovCouncil{Members: append([]types.Address{}, s.b.Council()...), Threshold: governance.CouncilThreshold, Paused: []apitypes.GovPause{}, Upgrades: []apitypes.GovVersion{}}
	err := s.b.View(func(v *store.View) error {
		out.Height = v.Head().Height
		n, err := governance.ReadCouncilNonce(v)
		if err != nil {
			return err
		}
		if cs, err := governance.ReadCouncil(v); err != nil {
			return err
		} else if cs != nil {
			out.Members = cs
		}
		out.Nonce = n
		ps, err := governance.ReadPauses(v)
		if err != nil {
			return err
		}
		for _, p := range ps {
			out.Paused = append(out.Paused, apitypes.GovPause{Actor: p.Actor, Since: p.Since, Lapses: p.Lapses, Ratified: p.Lapses == 0})
		}
		us, err := governance.ReadUpgrades(v)
		for _, u := range us {
			gv := apitypes.GovVersion{Actor: u.Actor, Version: u.Version}
			if u.Pending != nil {
				gv.Pending, gv.Activation = u.Pending.Version, u.Pending.Activation
			}
			if u.Rollback != nil {
				gv.Rollback, gv.RollbackDeadline = u.Rollback.Version, u.Rollback.Deadline
			}
			out.Upgrades = append(out.Upgrades, gv)
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// params is GET /v1/params[?key=K]: every governed parameter's value.
func (s *Server) params(c *gin.Context) {
	out := apitypes.Params{Params: []apitypes.Param{}}
	key := c.Query("key")
	if key != "" {
		if _, ok := s.b.Params().Def(key); !ok {
			fail(c, http.StatusNotFound, apitypes.CodeNotFound, fmt.Sprintf("no governed parameter %q", key))
			return
		}
	}
	err := s.b.View(func(v *store.View) error {
		out.Height = v.Head().Height
		vs, err := s.b.Params().All(v)
		for _, p := range vs {
			if key == "" || p.Key == key {
				out.Params = append(out.Params, apitypes.Param{Key: p.Key, Value: p.Value, Source: p.Source, Tier: p.Tier,
					Min: p.Min, Max: p.Max, Default: p.Default, Doc: p.Doc})
			}
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// treasury is GET /v1/treasury.
func (s *Server) treasury(c *gin.Context) {
	out := apitypes.Treasury{Address: types.TreasuryAddress}
	err := s.b.View(func(v *store.View) error {
		out.Height = v.Head().Height
		in, err := treasury.Read(v)
		out.Balance, out.Disbursed, out.Disbursements = in.Balance.String(), in.Disbursed.String(), in.Disbursements
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) govProposals(c *gin.Context) {
	out := apitypes.GovProposals{Proposals: []apitypes.GovProposal{}}
	err := s.b.View(func(v *store.View) error {
		out.Height = v.Head().Height
		ps, err := governance.ReadProposals(v)
		for _, p := range ps {
			out.Proposals = append(out.Proposals, proposalView(p))
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) govProposal(c *gin.Context) {
	id, err := strconv.ParseUint(c.Param("id"), 10, 64)
	if err != nil {
		fail(c, http.StatusBadRequest, apitypes.CodeBadRequest, "proposal id must be a number")
		return
	}
	var out *apitypes.GovProposal
	err = s.b.View(func(v *store.View) error {
		p, err := governance.ReadProposal(v, id)
		if p != nil {
			pv := proposalView(p)
			out = &pv
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	if out == nil {
		fail(c, http.StatusNotFound, apitypes.CodeNotFound, fmt.Sprintf("no proposal %d", id))
		return
	}
	c.JSON(http.StatusOK, out)
}

func proposalView(p *governance.Proposal) apitypes.GovProposal {
	t := governance.Count(p)
	out := apitypes.GovProposal{ID: p.ID, Proposer: p.Proposer, Tier: p.Tier, Title: p.Title, Deposit: p.Deposit.String(),
		Status: governance.StatusName(p.Status), SnapshotBlock: p.SnapshotBlock, VotingEnd: p.VotingEnd, ClosedAt: p.ClosedAt,
		ETA: p.ETA, FailCode: p.FailCode, QuorumBps: p.Rules.QuorumBps, ApprovalBps: p.Rules.ApprovalBps,
		ValidatorBps: p.Rules.ValidatorBps, TimelockBlocks: p.Rules.TimelockBlocks, QuorumReached: t.Quorum,
		Stake: apitypes.GovChamber{Yes: t.Yes.String(), No: t.No.String(), Abstain: t.Abstain.String(), Total: t.Total.String(), Passing: t.StakeOK},
		Validators: apitypes.GovChamber{Yes: strconv.FormatUint(t.ValYes, 10), No: strconv.FormatUint(t.ValNo, 10),
			Abstain: strconv.FormatUint(t.ValAbstain, 10), Total: strconv.FormatUint(t.Validators, 10), Passing: t.ValidatOK}}
	out.Ratify, out.Council = p.Ratify, p.Council
	for _, u := range p.Upgrade {
		out.Upgrade = append(out.Upgrade, apitypes.GovUpgrade{Actor: u.Actor, Version: u.Version, Activation: u.Activation, RollbackDeadline: u.RollbackDeadline})
	}
	for _, a := range p.Models {
		action := "unban"
		if a.Ban {
			action = "ban"
		}
		out.Models = append(out.Models, apitypes.GovModel{ID: a.ID, Action: action, Reason: a.Reason})
	}
	for _, c := range p.Params {
		out.Params = append(out.Params, apitypes.GovParamChange{Key: c.Key, Value: c.Value})
	}
	for _, d := range p.Disburse {
		out.Disburse = append(out.Disburse, apitypes.GovDisbursement{To: d.To, Amount: d.Amount.String()})
	}
	return out
}
