package entitlement

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/fxamacker/cbor/v2"
)

// ScopeKind enumerates Scope variants in the order of §7.1.
type ScopeKind uint8

// Scope kinds.
const (
	ScopeGlobal     ScopeKind = 0
	ScopeActor      ScopeKind = 1 // Addr
	ScopeToken      ScopeKind = 2 // ID, 32 bytes
	ScopeRunner     ScopeKind = 3 // Addr
	ScopeRunnerPool ScopeKind = 4 // ID, pool id bytes
	ScopeNamespace  ScopeKind = 5 // ID, namespace bytes
)

// MaxIDBytes bounds pool ids, namespaces, handler names and custom actions.
const MaxIDBytes = 64

// Scope is the resource boundary of a permission (§7.1). Only the field the
// kind uses may be set. Encoding (canonical CBOR array):
//
//	Global [0]   Actor [1, addr(20)]   Token [2, id(32)]   Runner [3, addr(20)]
//	RunnerPool [4, bytes]   Namespace [5, bytes]
type Scope struct {
	Kind ScopeKind
	Addr types.Address
	ID   []byte
}

// Constructors for each variant.
func GlobalScope() Scope                { return Scope{Kind: ScopeGlobal} }
func ActorScope(a types.Address) Scope  { return Scope{Kind: ScopeActor, Addr: a} }
func TokenScope(id [32]byte) Scope      { return Scope{Kind: ScopeToken, ID: id[:]} }
func RunnerScope(a types.Address) Scope { return Scope{Kind: ScopeRunner, Addr: a} }
func RunnerPoolScope(pool []byte) Scope { return Scope{Kind: ScopeRunnerPool, ID: bytes.Clone(pool)} }
func NamespaceScope(namespace []byte) Scope {
	return Scope{Kind: ScopeNamespace, ID: bytes.Clone(namespace)}
}

// Validate checks the variant's shape.
func (s Scope) Validate() error {
	switch s.Kind {
	case ScopeGlobal:
		if !s.Addr.IsZero() || s.ID != nil {
			return errors.New("global scope carries no data")
		}
	case ScopeActor, ScopeRunner:
		if s.ID != nil {
			return errors.New("address scope carries no id")
		}
	case ScopeToken:
		if len(s.ID) != 32 || !s.Addr.IsZero() {
			return errors.New("token scope needs a 32-byte token id")
		}
	case ScopeRunnerPool, ScopeNamespace:
		if len(s.ID) == 0 || len(s.ID) > MaxIDBytes || !s.Addr.IsZero() {
			return fmt.Errorf("pool/namespace id must be 1..%d bytes", MaxIDBytes)
		}
	default:
		return fmt.Errorf("unknown scope kind %d", s.Kind)
	}
	return nil
}

// Equal reports variant and payload equality.
func (s Scope) Equal(o Scope) bool {
	return s.Kind == o.Kind && s.Addr == o.Addr && bytes.Equal(s.ID, o.ID)
}

// Covers reports whether a grant on s applies to a request on o: Global
// covers every scope, otherwise the scopes must be equal.
func (s Scope) Covers(o Scope) bool { return s.Kind == ScopeGlobal || s.Equal(o) }

// MarshalCBOR implements the encoding above.
func (s Scope) MarshalCBOR() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	switch s.Kind {
	case ScopeGlobal:
		return cbor.Marshal([]any{uint64(s.Kind)})
	case ScopeActor, ScopeRunner:
		return cbor.Marshal([]any{uint64(s.Kind), s.Addr[:]})
	}
	return cbor.Marshal([]any{uint64(s.Kind), s.ID})
}

// UnmarshalCBOR decodes the encoding above (canonical form is enforced by
// codec.Unmarshal at the top level).
func (s *Scope) UnmarshalCBOR(data []byte) error {
	kind, payload, err := splitVariant(data)
	if err != nil {
		return fmt.Errorf("scope: %w", err)
	}
	v := Scope{Kind: ScopeKind(kind)}
	switch v.Kind {
	case ScopeGlobal:
		if payload != nil {
			return errors.New("scope: global takes no payload")
		}
	case ScopeActor, ScopeRunner, ScopeToken, ScopeRunnerPool, ScopeNamespace:
		b, err := byteString(payload)
		if err != nil {
			return fmt.Errorf("scope: %w", err)
		}
		if v.Kind == ScopeActor || v.Kind == ScopeRunner {
			if len(b) != types.AddressLength {
				return errors.New("scope: address must be 20 bytes")
			}
			copy(v.Addr[:], b)
		} else {
			v.ID = b
		}
	default:
		return fmt.Errorf("scope: unknown kind %d", kind)
	}
	if err := v.Validate(); err != nil {
		return fmt.Errorf("scope: %w", err)
	}
	*s = v
	return nil
}

// splitVariant decodes [kind] or [kind, payload].
func splitVariant(data []byte) (uint64, cbor.RawMessage, error) {
	var arr []cbor.RawMessage
	if err := cbor.Unmarshal(data, &arr); err != nil {
		return 0, nil, err
	}
	if len(arr) < 1 || len(arr) > 2 {
		return 0, nil, fmt.Errorf("variant must have 1 or 2 elements, got %d", len(arr))
	}
	var kind uint64
	if err := cbor.Unmarshal(arr[0], &kind); err != nil {
		return 0, nil, fmt.Errorf("variant kind: %w", err)
	}
	if kind > 255 {
		return 0, nil, fmt.Errorf("variant kind %d out of range", kind)
	}
	if len(arr) == 1 {
		return kind, nil, nil
	}
	return kind, arr[1], nil
}

func byteString(raw cbor.RawMessage) ([]byte, error) {
	if len(raw) == 0 || raw[0]>>5 != 2 {
		return nil, errors.New("expected a byte string payload")
	}
	var b []byte
	if err := cbor.Unmarshal(raw, &b); err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// ActionKind enumerates Action variants in the order of §7.1.
type ActionKind uint8

// Action kinds.
const (
	ActionAll                    ActionKind = 0
	ActionTokenTransfer          ActionKind = 1
	ActionTokenMint              ActionKind = 2
	ActionTokenBurn              ActionKind = 3
	ActionTokenFreeze            ActionKind = 4
	ActionTokenSetHook           ActionKind = 5
	ActionTokenTransferOwnership ActionKind = 6
	ActionActorDeploy            ActionKind = 7
	ActionActorSendMessage       ActionKind = 8
	ActionActorExecuteHandler    ActionKind = 9 // Data = handler name
	ActionRunnerRegister         ActionKind = 10
	ActionRunnerSubmitJob        ActionKind = 11
	ActionRunnerSubmitResult     ActionKind = 12
	ActionRunnerJoinPool         ActionKind = 13 // Data = pool id
	ActionSystemTransfer         ActionKind = 14
	ActionSystemCreateAccount    ActionKind = 15
	ActionSystemUpgrade          ActionKind = 16
	ActionCustom                 ActionKind = 17 // Data = custom bytes
)

func (k ActionKind) hasData() bool {
	return k == ActionActorExecuteHandler || k == ActionRunnerJoinPool || k == ActionCustom
}

// Action is the permitted operation (§7.1). Encoding: [kind] for unit
// variants, [kind, bytes] for ActorExecuteHandler / RunnerJoinPool / Custom,
// and [10, null | uint] for RunnerRegister { min_stake_override }.
type Action struct {
	Kind ActionKind
	Data []byte
	// MinStakeOverride is RunnerRegister's Option<u128>; nil = None.
	MinStakeOverride *big.Int
}

// RunnerJoinPoolAction is Action::RunnerJoinPool(pool).
func RunnerJoinPoolAction(pool []byte) Action {
	return Action{Kind: ActionRunnerJoinPool, Data: bytes.Clone(pool)}
}

// Validate checks the variant's shape.
func (a Action) Validate() error {
	if a.Kind > ActionCustom {
		return fmt.Errorf("unknown action kind %d", a.Kind)
	}
	if a.Kind.hasData() {
		if len(a.Data) == 0 || len(a.Data) > MaxIDBytes {
			return fmt.Errorf("action data must be 1..%d bytes", MaxIDBytes)
		}
	} else if a.Data != nil {
		return errors.New("action carries no data")
	}
	if a.MinStakeOverride != nil && (a.Kind != ActionRunnerRegister || a.MinStakeOverride.Sign() < 0 || a.MinStakeOverride.BitLen() > 128) {
		return errors.New("min_stake_override is a u128 of RunnerRegister only")
	}
	return nil
}

// Equal reports variant and payload equality.
func (a Action) Equal(o Action) bool {
	if a.Kind != o.Kind || !bytes.Equal(a.Data, o.Data) || (a.MinStakeOverride == nil) != (o.MinStakeOverride == nil) {
		return false
	}
	return a.MinStakeOverride == nil || a.MinStakeOverride.Cmp(o.MinStakeOverride) == 0
}

// Covers reports whether a grant of a applies to a request for o: All covers
// every action, otherwise they must be equal.
func (a Action) Covers(o Action) bool { return a.Kind == ActionAll || a.Equal(o) }

// MarshalCBOR implements the encoding above.
func (a Action) MarshalCBOR() ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("action: %w", err)
	}
	switch {
	case a.Kind.hasData():
		return cbor.Marshal([]any{uint64(a.Kind), a.Data})
	case a.Kind == ActionRunnerRegister:
		if a.MinStakeOverride == nil {
			return cbor.Marshal([]any{uint64(a.Kind), nil})
		}
		return codec.Marshal([]any{uint64(a.Kind), a.MinStakeOverride})
	}
	return cbor.Marshal([]any{uint64(a.Kind)})
}

// UnmarshalCBOR decodes the encoding above.
func (a *Action) UnmarshalCBOR(data []byte) error {
	kind, payload, err := splitVariant(data)
	if err != nil {
		return fmt.Errorf("action: %w", err)
	}
	v := Action{Kind: ActionKind(kind)}
	switch {
	case kind > uint64(ActionCustom):
		return fmt.Errorf("action: unknown kind %d", kind)
	case v.Kind.hasData():
		if v.Data, err = byteString(payload); err != nil {
			return fmt.Errorf("action: %w", err)
		}
	case v.Kind == ActionRunnerRegister:
		if payload == nil {
			return errors.New("action: runner_register needs its option")
		}
		if !bytes.Equal(payload, []byte{0xf6}) {
			var n big.Int
			if err := cbor.Unmarshal(payload, &n); err != nil {
				return fmt.Errorf("action: min_stake_override: %w", err)
			}
			v.MinStakeOverride = &n
		}
	default:
		if payload != nil {
			return errors.New("action: unit variant takes no payload")
		}
	}
	if err := v.Validate(); err != nil {
		return fmt.Errorf("action: %w", err)
	}
	*a = v
	return nil
}

// RateLimit bounds uses per window of blocks. WindowStart and WindowUsed are
// state, like Constraints.UsedCount.
type RateLimit struct {
	_            struct{} `cbor:",toarray"`
	MaxUses      uint64   `json:"max_uses"`
	WindowBlocks uint64   `json:"window_blocks"`
	WindowStart  uint64   `json:"window_start"`
	WindowUsed   uint64   `json:"window_used"`
}

// Constraints are the use conditions of §7.1.
type Constraints struct {
	_                  struct{}   `cbor:",toarray"`
	ValidFrom          *uint64    `json:"valid_from"`  // inclusive
	ValidUntil         *uint64    `json:"valid_until"` // inclusive: valid while height ≤ valid_until
	MaxUses            uint64     `json:"max_uses"`    // 0 = unlimited
	UsedCount          uint64     `json:"used_count"`
	MaxAmountPerUse    *uint64    `json:"max_amount_per_use"`
	MaxTotalAmount     *uint64    `json:"max_total_amount"`
	TotalAmountUsed    uint64     `json:"total_amount_used"`
	RateLimit          *RateLimit `json:"rate_limit"`
	Delegatable        bool       `json:"delegatable"`
	DelegationDepthMax uint8      `json:"delegation_depth_max"` // 0 = non-delegatable
	Revocable          bool       `json:"revocable"`
}

// Entitlement is one (scope, action) grant (§7.1).
type Entitlement struct {
	_           struct{}      `cbor:",toarray"`
	Grantee     types.Address `json:"grantee"`
	Scope       Scope         `json:"scope"`
	Action      Action        `json:"action"`
	Constraints Constraints   `json:"constraints"`
	ParentID    *types.Hash   `json:"parent_id"`
}

// ID is the EntitlementId of §7.1:
//
//	keccak256(grantee(20) || CBOR(scope) || CBOR(action) || parent_id(32)?)
//
// The CBOR items are self-delimiting, so the concatenation is unambiguous;
// parent_id is appended only for delegated entitlements.
func (e *Entitlement) ID() (types.Hash, error) {
	return EntitlementID(e.Grantee, e.Scope, e.Action, e.ParentID)
}

// EntitlementID computes the id from its parts (see Entitlement.ID).
func EntitlementID(grantee types.Address, s Scope, a Action, parent *types.Hash) (types.Hash, error) {
	sb, err := codec.Marshal(s)
	if err != nil {
		return types.Hash{}, err
	}
	ab, err := codec.Marshal(a)
	if err != nil {
		return types.Hash{}, err
	}
	parts := [][]byte{grantee[:], sb, ab}
	if parent != nil {
		parts = append(parts, parent[:])
	}
	return types.Keccak256(parts...), nil
}

// Role is a named permission set (§7.1). A role grants every (scope, action)
// pair of Scopes × Actions; of its Constraints only the validity window
// (valid_from / valid_until) applies to role-derived permissions — use
// counters and amounts are tracked only on Entitlement records.
type Role struct {
	_           struct{}    `cbor:",toarray"`
	Name        []byte      `json:"name"`
	Scopes      []Scope     `json:"scopes"`
	Actions     []Action    `json:"actions"`
	Constraints Constraints `json:"constraints"`
}

// RoleIDDomain prefixes role id preimages.
const RoleIDDomain = "cowboy-role-v1:"

// RoleID is keccak256("cowboy-role-v1:" || creator(20) || name).
func RoleID(creator types.Address, name []byte) types.Hash {
	return types.Keccak256([]byte(RoleIDDomain), creator[:], name)
}

// Record is the stored form of an entitlement.
type Record struct {
	_           struct{}      `cbor:",toarray"`
	Entitlement Entitlement   `json:"entitlement"`
	Granter     types.Address `json:"granter"` // may revoke (with governance)
	Depth       uint8         `json:"depth"`   // 0 = direct grant, n = n-th delegation
	CreatedAt   uint64        `json:"created_at"`
}

// RoleRecord is the stored form of a role.
type RoleRecord struct {
	_       struct{}      `cbor:",toarray"`
	Role    Role          `json:"role"`
	Creator types.Address `json:"creator"`
}

// Decoders for instruction payloads (§7.2: scope, action and constraints are
// codec-encoded) and stored records. All reject non-canonical input.

// DecodeScope decodes a codec-encoded Scope.
func DecodeScope(b []byte) (Scope, error) { var v Scope; return v, decode(b, &v) }

// DecodeAction decodes a codec-encoded Action.
func DecodeAction(b []byte) (Action, error) { var v Action; return v, decode(b, &v) }

// DecodeConstraints decodes codec-encoded Constraints.
func DecodeConstraints(b []byte) (Constraints, error) { var v Constraints; return v, decode(b, &v) }

// DecodeScopes decodes a codec-encoded Vec<Scope> (EntitlementCreateRole).
func DecodeScopes(b []byte) ([]Scope, error) { var v []Scope; return v, decode(b, &v) }

// DecodeActions decodes a codec-encoded Vec<Action> (EntitlementCreateRole).
func DecodeActions(b []byte) ([]Action, error) { var v []Action; return v, decode(b, &v) }

// DecodeRecord decodes a stored entitlement record.
func DecodeRecord(b []byte) (Record, error) { var v Record; return v, decode(b, &v) }

// DecodeRoleRecord decodes a stored role record.
func DecodeRoleRecord(b []byte) (RoleRecord, error) { var v RoleRecord; return v, decode(b, &v) }

func decode(b []byte, v any) error {
	if err := codec.Unmarshal(b, v); err != nil {
		return fmt.Errorf("entitlement: %w", err)
	}
	return nil
}
