package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/entitlements"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

var faultNames = map[uint8]string{verify.FaultImpossibleJob: "impossible_job", verify.FaultActorFault: "actor_fault",
	verify.FaultExternalFault: "external_fault"}

// runnerDelegations is GET /v1/runners/{addr}/delegations.
func (s *Server) runnerDelegations(c *gin.Context) {
	addr, ok := parseAddress(c, c.Param("addr"))
	if !ok {
		return
	}
	out := []apitypes.Delegation{}
	err := s.b.View(func(v *store.View) error {
		ds, err := runners.ReadDelegations(v, addr)
		for _, d := range ds {
			out = append(out, apitypes.Delegation{Delegator: d.Delegator, Amount: decStr(d.Amount), Since: d.Since})
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// unbonding is GET /v1/unbonding/{addr}: the address's unbonding tranches.
func (s *Server) unbonding(c *gin.Context) {
	addr, ok := parseAddress(c, c.Param("addr"))
	if !ok {
		return
	}
	out := []apitypes.Tranche{}
	err := s.b.View(func(v *store.View) error {
		ts, err := runners.ReadTranches(v, addr)
		h := v.Head().Height
		for _, t := range ts {
			out = append(out, apitypes.Tranche{Owner: t.Owner, Runner: t.Runner, Amount: decStr(t.Amount), Release: t.Release,
				Matured: t.Release <= h+1, Height: h})
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// EntitlementJSON renders a stored entitlement record.
func EntitlementJSON(rec *entitlement.Record) apitypes.Entitlement {
	e := &rec.Entitlement
	id, _ := e.ID()
	cons, _ := json.Marshal(e.Constraints)
	return apitypes.Entitlement{ID: id, Grantee: e.Grantee, Granter: rec.Granter, Scope: e.Scope.String(), Action: e.Action.String(),
		ScopeCBOR: codec.MustMarshal(e.Scope), ActionCBOR: codec.MustMarshal(e.Action), Constraints: json.RawMessage(cons),
		Parent: e.ParentID, Depth: rec.Depth, CreatedAt: rec.CreatedAt}
}

// entitlements is GET /v1/entitlements/{addr}: live entitlements held.
func (s *Server) entitlements(c *gin.Context) {
	addr, ok := parseAddress(c, c.Param("addr"))
	if !ok {
		return
	}
	out := []apitypes.Entitlement{}
	err := s.b.View(func(v *store.View) error {
		recs, err := entitlements.ReadOnly(v).List(addr, v.Head().Height+1)
		for i := range recs {
			out = append(out, EntitlementJSON(&recs[i]))
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// entitlementCheck is GET /v1/entitlements/{addr}/check?scope=…&action=…
// [&height=H] (text forms, see entitlement.ParseScope): whether addr may
// perform action on scope at height H (default: the next block).
func (s *Server) entitlementCheck(c *gin.Context) {
	addr, ok := parseAddress(c, c.Param("addr"))
	if !ok {
		return
	}
	sc, err := entitlement.ParseScope(c.Query("scope"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_scope", err.Error())
		return
	}
	ac, err := entitlement.ParseAction(c.Query("action"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_action", err.Error())
		return
	}
	var height uint64
	if h := c.Query("height"); h != "" {
		if height, err = strconv.ParseUint(h, 10, 64); err != nil {
			fail(c, http.StatusBadRequest, "bad_height", err.Error())
			return
		}
	}
	out := apitypes.EntitlementCheck{Grantee: addr, Height: height}
	err = s.b.View(func(v *store.View) error {
		if out.Height == 0 {
			out.Height = v.Head().Height + 1
		}
		var err error
		out.Allowed, err = entitlements.ReadOnly(v).Check(addr, sc, ac, out.Height)
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// jobSelection is GET /v1/jobs/{id}/selection.
func (s *Server) jobSelection(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	var out apitypes.JobSelection
	err = s.b.View(func(v *store.View) error {
		j, err := jobs.ReadJob(v, id)
		if err != nil {
			return err
		}
		if j == nil {
			return errors.Join(store.ErrNotFound, fmt.Errorf("no job %s", id))
		}
		snap, err := jobs.ReadJobSnapshot(v, id)
		if err != nil {
			return err
		}
		out = apitypes.JobSelection{JobID: id, Seed: j.Seed, AttemptSeed: j.Seed, Retry: j.Retry, Runners: uint32(j.Spec.Verification.Runners),
			Excluded: addrs(j.Excluded), CandidateRoot: j.CandidateRoot, Candidates: make([]apitypes.JobCandidate, len(snap))}
		if j.Retry > 0 {
			out.AttemptSeed = selection.RetrySeed(j.Seed, j.Retry)
		}
		for i, e := range snap {
			out.Candidates[i] = apitypes.JobCandidate{Address: e.Address, Stake: decStr(e.Stake), Reputation: e.Reputation}
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// callbackStats is GET /v1/offchain/actors/{addr}: an actor's job-callback
// counters (runners may refuse actors whose callbacks keep failing).
func (s *Server) callbackStats(c *gin.Context) {
	addr, ok := parseAddress(c, c.Param("addr"))
	if !ok {
		return
	}
	var out apitypes.CallbackStats
	err := s.b.View(func(v *store.View) error {
		st, err := s.b.CallbackStats(v, addr)
		out = apitypes.CallbackStats{Actor: addr, Delivered: st.Delivered, Failed: st.Failed, Height: v.Head().Height}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
