package api

import (
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/gin-gonic/gin"
)

var validatorStatus = map[uint8]string{
	validators.ValidatorPending: "pending",
	validators.ValidatorActive:  "active",
	validators.ValidatorExiting: "exiting",
	validators.ValidatorExited:  "exited",
}

// validators is GET /v1/validators: the epoch's set and the registry. A
// --dev chain has no registry and answers an empty set.
func (s *Server) validatorSet(c *gin.Context) {
	out := apitypes.Validators{Members: []apitypes.SetMember{}, Validators: []apitypes.Validator{}}
	err := s.b.View(func(v *store.View) error {
		out.Height = v.Head().Height
		ep, err := validators.ReadEpoch(v)
		if err != nil || ep == nil {
			return err
		}
		out.Epoch, out.StartHeight = ep.Number, ep.StartHeight
		for i, m := range ep.Members {
			out.Members = append(out.Members, apitypes.SetMember{Index: i, Address: m.Address, Weight: m.Weight})
		}
		return v.Scan(validators.ValidatorPrefix(), func(_, val []byte) error {
			var r validators.ValidatorRecord
			if err := codec.Unmarshal(val, &r); err != nil {
				return err
			}
			out.Validators = append(out.Validators, apitypes.Validator{
				Address: r.Address, Stake: r.Stake.String(), Status: validatorStatus[r.Status],
				Jailed: r.Jailed, JailedUntil: r.JailedUntil, Missed: r.Missed, RegisteredAt: r.RegisteredAt,
			})
			return nil
		})
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
