package models

import (
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Params are the Model Registry parameters. Zero fields take the defaults.
type Params struct {
	// Deposit is the refundable publish deposit: 1,000 CBY (spec 002 §5.1).
	Deposit *big.Int
	// RetireDelay is how many blocks after retirement the deposit is
	// released: 604,800 (the 7-day unbonding period of 1-second blocks),
	// so that governance can still ban a model retired to dodge a ban.
	RetireDelay uint64
}

func (p *Params) fill() {
	if p.Deposit == nil {
		p.Deposit = new(big.Int).Mul(big.NewInt(1_000), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	}
	if p.RetireDelay == 0 {
		p.RetireDelay = 604_800
	}
}

// Execution costs beyond the intrinsic cost; each instruction also pays one
// cell per byte it stores.
const (
	PublishCycles = 20_000
	UpdateCycles  = 5_000
)

// Limits of a publication's labels.
const (
	MaxNameBytes = 64
	MaxURIBytes  = 256
)

// Model statuses.
const (
	StatusActive  uint8 = 1
	StatusRetired uint8 = 2
)

// Model is a Model Registry record.
type Model struct {
	_           struct{}      `cbor:",toarray"`
	ID          types.Hash    `json:"id"`
	Weights     types.Hash    `json:"weights"`
	Arch        types.Hash    `json:"arch"`
	Tokenizer   types.Hash    `json:"tokenizer"`
	License     types.Hash    `json:"license"`
	Name        string        `json:"name"`
	URI         string        `json:"uri"`
	Publisher   types.Address `json:"publisher"`
	Deposit     *big.Int      `json:"deposit"`
	PublishedAt uint64        `json:"published_at"`
	Status      uint8         `json:"status"`     // StatusActive or StatusRetired
	ReleaseAt   uint64        `json:"release_at"` // retired: the first height the deposit can be withdrawn
	Banned      bool          `json:"banned"`
	BanReason   string        `json:"ban_reason,omitempty"`
}

// ID derives model_id = keccak256(weights ‖ arch ‖ tokenizer ‖ license)
// from the components' hashes (spec 002 §5.1).
func ID(weights, arch, tokenizer, license types.Hash) types.Hash {
	return types.Keccak256(weights[:], arch[:], tokenizer[:], license[:])
}

// ParseRef reports whether s, a model a runner declares or a job names,
// is a registry model id: exactly "0x" and 64 lowercase hex digits (the
// form types.Hash.String writes). Other strings are free model names.
func ParseRef(s string) (types.Hash, bool) {
	if len(s) != 66 || !strings.HasPrefix(s, "0x") || strings.ToLower(s) != s {
		return types.Hash{}, false
	}
	h, err := types.ParseHash(s)
	return h, err == nil
}

func modelKey(parts ...[]byte) []byte { return system.Key(types.ModelRegistryAddress, parts...) }

// Key is the state key of model id's record.
func Key(id types.Hash) []byte { return modelKey([]byte("m/"), id[:]) }

// Prefix prefixes every model record.
func Prefix() []byte { return modelKey([]byte("m/")) }

// Read decodes model id's record (nil if absent).
func Read(r state.Reader, id types.Hash) (*Model, error) {
	return system.Get[Model](r, Key(id), "decode model %s", id)
}

// List returns every model in id order.
func List(r state.Reader) ([]Model, error) {
	var out []Model
	err := r.Scan(Prefix(), func(_, v []byte) error {
		var m Model
		if err := codec.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("decode model: %w", err)
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// Usable fails unless model id is registered, active and not banned: what
// a runner's declaration and a job's model_id require. The failure carries
// CodeNoSuchModel, CodeModelRetired or CodeModelBanned.
func Usable(r state.Reader, id types.Hash) error {
	m, err := Read(r, id)
	if err != nil {
		return err
	}
	switch {
	case m == nil:
		return system.Failf(system.CodeNoSuchModel, "NoSuchModel: model %s is not registered", id)
	case m.Banned:
		return system.Failf(system.CodeModelBanned, "ModelBanned: model %s is banned: %s", id, m.BanReason)
	case m.Status != StatusActive:
		return system.Failf(system.CodeModelRetired, "ModelRetired: model %s is retired", id)
	}
	return nil
}

func validLabel(s string, minLen, maxLen int) bool {
	return len(s) >= minLen && len(s) <= maxLen && utf8.ValidString(s) && strings.TrimSpace(s) == s
}

func (x *txCtx) save(m *Model) error {
	b := codec.MustMarshal(m)
	if err := x.Charge(0, uint64(len(b))); err != nil {
		return err
	}
	x.State().Set(Key(m.ID), b)
	return nil
}

func (x *txCtx) publish(from types.Address, in *types.ModelPublish) ([]byte, error) {
	if err := x.Charge(PublishCycles, 0); err != nil {
		return nil, err
	}
	if !validLabel(in.Name, 1, MaxNameBytes) || !validLabel(in.URI, 0, MaxURIBytes) {
		return nil, system.Failf(system.CodeInvalidModel, "InvalidModel: name is 1..%d and uri 0..%d bytes of UTF-8 without surrounding spaces", MaxNameBytes, MaxURIBytes)
	}
	dep := x.m.p.Deposit
	if v := x.Transaction().Value(); v.Cmp(dep) != 0 {
		return nil, system.Failf(system.CodeModelDeposit, "ModelDeposit: publishing takes a deposit of exactly %s, not %s", dep, v)
	}
	id := ID(in.Weights, in.Arch, in.Tokenizer, in.License)
	if ex, err := Read(x.State(), id); err != nil {
		return nil, err
	} else if ex != nil {
		return nil, system.Failf(system.CodeModelExists, "ModelExists: model %s is registered", id)
	}
	if err := x.MoveValue(from, types.ModelRegistryAddress, dep); err != nil {
		return nil, err
	}
	m := &Model{ID: id, Weights: in.Weights, Arch: in.Arch, Tokenizer: in.Tokenizer, License: in.License, Name: in.Name, URI: in.URI,
		Publisher: from, Deposit: new(big.Int).Set(dep), PublishedAt: x.Env().Height, Status: StatusActive}
	if err := x.save(m); err != nil {
		return nil, err
	}
	x.Emit(types.ModelRegistryAddress, &ModelPublishedEvent{ID: id, Publisher: from, Name: in.Name, Deposit: m.Deposit})
	return codec.MustMarshal(id[:]), nil
}

// owned returns model id if from published it.
func (x *txCtx) owned(from types.Address, id types.Hash) (*Model, error) {
	if err := x.Charge(UpdateCycles, 0); err != nil {
		return nil, err
	}
	m, err := Read(x.State(), id)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, system.Failf(system.CodeNoSuchModel, "NoSuchModel: model %s is not registered", id)
	}
	if m.Publisher != from {
		return nil, system.Failf(system.CodeNotModelOwner, "NotModelOwner: model %s was published by %s", id, m.Publisher)
	}
	return m, nil
}

func (x *txCtx) retire(from types.Address, in *types.ModelRetire) error {
	m, err := x.owned(from, in.ID)
	if err != nil {
		return err
	}
	if m.Status == StatusRetired {
		return system.Failf(system.CodeModelRetired, "ModelRetired: model %s is retired", in.ID)
	}
	m.Status, m.ReleaseAt = StatusRetired, x.Env().Height+x.m.p.RetireDelay
	if err := x.save(m); err != nil {
		return err
	}
	x.Emit(types.ModelRegistryAddress, &ModelRetiredEvent{ID: m.ID, ReleaseAt: m.ReleaseAt})
	return nil
}

func (x *txCtx) withdraw(from types.Address, in *types.ModelWithdraw) error {
	m, err := x.owned(from, in.ID)
	if err != nil {
		return err
	}
	switch {
	case m.Status != StatusRetired:
		return system.Failf(system.CodeNotRetired, "NotRetired: retire model %s first", in.ID)
	case m.Banned:
		return system.Failf(system.CodeModelBanned, "ModelBanned: the deposit of banned model %s is held", in.ID)
	case x.Env().Height < m.ReleaseAt:
		return system.Failf(system.CodeStillUnbonding, "StillUnbonding: the deposit of model %s is released at height %d", in.ID, m.ReleaseAt)
	}
	if err := x.MoveValue(types.ModelRegistryAddress, from, m.Deposit); err != nil {
		return err
	}
	x.State().Delete(Key(m.ID))
	x.Emit(types.ModelRegistryAddress, &ModelWithdrawnEvent{ID: m.ID, Publisher: from, Amount: m.Deposit})
	return nil
}

// Ban bans model id with reason: jobs can no longer name it, runners can
// no longer declare it, and its deposit is held. It is governance's entry
// point (CIP-12 proposals call it, or send model_ban as 0x…09); it does
// not check the caller and charges nothing, so that it also runs in an
// end-of-block step without a budget.
func (m *Module) Ban(x system.Tx, id types.Hash, reason string) error {
	return (&txCtx{Tx: x, m: m}).setBan(id, true, reason, false)
}

// Unban lifts the ban on model id; like Ban, it is governance's entry point.
func (m *Module) Unban(x system.Tx, id types.Hash) error {
	return (&txCtx{Tx: x, m: m}).setBan(id, false, "", false)
}

// setBan sets or lifts a ban; metered, it charges like any instruction.
func (x *txCtx) setBan(id types.Hash, banned bool, reason string, metered bool) error {
	if metered {
		if err := x.Charge(UpdateCycles, 0); err != nil {
			return err
		}
	}
	if !validLabel(reason, 0, MaxURIBytes) {
		return system.Failf(system.CodeInvalidModel, "InvalidModel: a ban reason is 0..%d bytes of UTF-8", MaxURIBytes)
	}
	md, err := Read(x.State(), id)
	if err != nil {
		return err
	}
	if md == nil {
		return system.Failf(system.CodeNoSuchModel, "NoSuchModel: model %s is not registered", id)
	}
	md.Banned, md.BanReason = banned, reason
	if metered {
		if err := x.save(md); err != nil {
			return err
		}
	} else {
		x.State().Set(Key(id), codec.MustMarshal(md))
	}
	if banned {
		x.Emit(types.ModelRegistryAddress, &ModelBannedEvent{ID: id, Reason: reason})
	} else {
		x.Emit(types.ModelRegistryAddress, &ModelUnbannedEvent{ID: id})
	}
	return nil
}
