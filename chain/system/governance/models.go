package governance

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ModelTier is the lowest tier of a model ban or unban: spec 002 §5.1 lets
// governance ban models without naming a tier, and §11.3 puts registry and
// whitelist decisions in Tier 1.
const ModelTier = 1

// ModelRegistry is the Model Registry's governance entry point
// (models.Module): a passed model proposal calls it at its execution.
type ModelRegistry interface {
	Ban(x system.Tx, id types.Hash, reason string) error
	Unban(x system.Tx, id types.Hash) error
}

// UseModels connects the Model Registry that model proposals act on. It is
// set up before the chain runs; without it, model proposals are refused.
func (m *Module) UseModels(r ModelRegistry) { m.models = r }

// checkModels is the stateless check of a proposal's model actions: a ban
// gives a reason (the registry's rule: UTF-8, at most models.MaxURIBytes,
// no surrounding spaces), an unban none.
func checkModels(ms []types.GovModel) error {
	for _, a := range ms {
		switch {
		case a.Ban && (a.Reason == "" || len(a.Reason) > models.MaxURIBytes || !utf8.ValidString(a.Reason) || strings.TrimSpace(a.Reason) != a.Reason):
			return fmt.Errorf("%w: a model ban gives a reason of 1..%d bytes of UTF-8 without surrounding spaces", types.ErrMalformedTx, models.MaxURIBytes)
		case !a.Ban && a.Reason != "":
			return fmt.Errorf("%w: a model unban gives no reason", types.ErrMalformedTx)
		}
	}
	return nil
}

// proposeModels refuses a model proposal below Tier 1, one naming a model
// twice or an unregistered model, or one on a chain without the registry.
func (m *Module) proposeModels(x system.Tx, in *types.GovPropose) error {
	if len(in.Models) == 0 {
		return nil
	}
	if m.models == nil {
		return system.Failf(system.CodeInvalidProposal, "InvalidProposal: this chain has no Model Registry")
	}
	if in.Tier < ModelTier {
		return system.Failf(system.CodeTierTooLow, "TierTooLow: a model ban or unban needs tier %d, the proposal is tier %d", ModelTier, in.Tier)
	}
	for i, a := range in.Models {
		for _, prev := range in.Models[:i] {
			if prev.ID == a.ID {
				return system.Failf(system.CodeInvalidProposal, "InvalidProposal: model %s named twice", a.ID)
			}
		}
		md, err := models.Read(x.State(), a.ID)
		if err != nil {
			return err
		}
		if md == nil {
			return system.Failf(system.CodeNoSuchModel, "NoSuchModel: model %s is not registered", a.ID)
		}
	}
	return nil
}

// applyModels bans and unbans through the registry; a model withdrawn since
// the proposal fails the execution with NoSuchModel, and the caller
// reverts every change of the proposal.
func (m *Module) applyModels(x system.Tx, ms []types.GovModel) error {
	if len(ms) > 0 && m.models == nil {
		return system.Failf(system.CodeInvalidProposal, "InvalidProposal: this chain has no Model Registry")
	}
	for _, a := range ms {
		var err error
		if a.Ban {
			err = m.models.Ban(x, a.ID, a.Reason)
		} else {
			err = m.models.Unban(x, a.ID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
