package entitlement

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Safety limits (§7.5).
const (
	MaxEntitlementsPerAddress = 256
	MaxRolesPerAddress        = 64
	MaxDelegationDepth        = 5
	MaxRoleNameBytes          = 64
	MaxRoleScopes             = 16
	MaxRoleActions            = 16
)

// Gas costs of §7.4.
const (
	GrantCycles           = 5_000
	GrantCells            = 500
	RevokeCycles          = 2_000
	RevokeCells           = 100
	DelegateCycles        = 3_000
	DelegateCells         = 300
	CreateRoleCycles      = 5_000
	CreateRoleCells       = 500
	AssignRoleCycles      = 2_000 // AssignRole and RevokeRole
	AssignRoleCells       = 100
	CheckCycles           = 500 // per candidate, §4 filter
	CheckCells            = 0
	InstructionGrant      = 30 // system instruction numbers (§7.2)
	InstructionRevoke     = 31
	InstructionDelegate   = 32
	InstructionCreateRole = 33
	InstructionAssignRole = 34
	InstructionRevokeRole = 35
)

// Errors; every error returned by the Registry wraps one of these (or a KV
// error).
var (
	ErrNotFound     = errors.New("entitlement: not found")
	ErrExists       = errors.New("entitlement: already exists")
	ErrLimit        = errors.New("entitlement: per-address limit reached")
	ErrUnauthorized = errors.New("entitlement: caller may not do this")
	ErrInvalid      = errors.New("entitlement: invalid argument")
	ErrNotNarrower  = errors.New("entitlement: delegated constraints are not strictly narrower")
	ErrDenied       = errors.New("entitlement: use not permitted")
)

// KV is the storage the Registry runs on; the chain backs it with the
// Entitlement Registry actor's state. Scan visits keys with the prefix in
// ascending byte order; fn must not modify the store.
type KV interface {
	Get(key []byte) (value []byte, ok bool, err error)
	Set(key, value []byte) error
	Delete(key []byte) error
	Scan(prefix []byte, fn func(key, value []byte) error) error
}

// Storage layout (all keys are prefix || fixed-width fields):
//
//	"e/" || grantee(20) || id(32)      → CBOR(Record)
//	"i/" || id(32)                     → grantee(20)
//	"r/" || role_id(32)                → CBOR(RoleRecord)
//	"a/" || assignee(20) || role_id(32) → 0x01
//	"p/" || grantee(20) || Keccak256(CBOR(scope) || CBOR(action)) || id(32) → 0x01
//
// The "p/" index finds a grantee's records for one exact (scope, action)
// — the pool filter — without decoding all of its (up to 256) records.
var (
	prefixEnt    = []byte("e/")
	prefixIndex  = []byte("i/")
	prefixRole   = []byte("r/")
	prefixAssign = []byte("a/")
	prefixPair   = []byte("p/")
)

// pairHash is Keccak256(CBOR(scope) || CBOR(action)).
func pairHash(s Scope, a Action) (types.Hash, error) {
	sb, err := codec.Marshal(s)
	if err != nil {
		return types.Hash{}, err
	}
	ab, err := codec.Marshal(a)
	if err != nil {
		return types.Hash{}, err
	}
	return types.Keccak256(sb, ab), nil
}

func key(prefix []byte, parts ...[]byte) []byte {
	k := slices.Clone(prefix)
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

// Registry is the Entitlement Registry logic over a KV. It holds no other
// state; authorisation of who may grant or create roles (pool owner,
// governance) is the calling system actor's decision.
type Registry struct {
	kv         KV
	governance types.Address
}

// NewRegistry returns a Registry over kv; governance may revoke any
// revocable entitlement.
func NewRegistry(kv KV, governance types.Address) *Registry {
	return &Registry{kv: kv, governance: governance}
}

func validConstraints(c *Constraints) error {
	if c.UsedCount != 0 || c.TotalAmountUsed != 0 || (c.RateLimit != nil && (c.RateLimit.WindowStart != 0 || c.RateLimit.WindowUsed != 0)) {
		return fmt.Errorf("%w: usage counters must start at zero", ErrInvalid)
	}
	if c.ValidFrom != nil && c.ValidUntil != nil && *c.ValidFrom > *c.ValidUntil {
		return fmt.Errorf("%w: valid_from after valid_until", ErrInvalid)
	}
	if c.DelegationDepthMax > MaxDelegationDepth {
		return fmt.Errorf("%w: delegation_depth_max above %d", ErrInvalid, MaxDelegationDepth)
	}
	if c.Delegatable != (c.DelegationDepthMax > 0) {
		return fmt.Errorf("%w: delegatable must equal delegation_depth_max > 0", ErrInvalid)
	}
	if c.RateLimit != nil && (c.RateLimit.MaxUses == 0 || c.RateLimit.WindowBlocks == 0) {
		return fmt.Errorf("%w: rate limit needs max_uses and window_blocks > 0", ErrInvalid)
	}
	return nil
}

// status of a record at a height.
type status uint8

const (
	live      status = iota
	notYet           // before valid_from
	expired          // after valid_until: delete lazily
	exhausted        // max uses / total amount reached
)

func (c *Constraints) status(at uint64) status {
	switch {
	case c.ValidUntil != nil && at > *c.ValidUntil:
		return expired
	case c.ValidFrom != nil && at < *c.ValidFrom:
		return notYet
	case c.MaxUses != 0 && c.UsedCount >= c.MaxUses:
		return exhausted
	case c.MaxTotalAmount != nil && c.TotalAmountUsed >= *c.MaxTotalAmount:
		return exhausted
	}
	return live
}

func (r *Registry) put(rec *Record) error {
	id, err := rec.Entitlement.ID()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	b, err := codec.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	g := rec.Entitlement.Grantee
	if err := r.kv.Set(key(prefixEnt, g[:], id[:]), b); err != nil {
		return fmt.Errorf("entitlement: store: %w", err)
	}
	if err := r.kv.Set(key(prefixIndex, id[:]), g[:]); err != nil {
		return fmt.Errorf("entitlement: store: %w", err)
	}
	ph, err := pairHash(rec.Entitlement.Scope, rec.Entitlement.Action)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := r.kv.Set(key(prefixPair, g[:], ph[:], id[:]), []byte{1}); err != nil {
		return fmt.Errorf("entitlement: store: %w", err)
	}
	return nil
}

func (r *Registry) remove(rec *Record, id types.Hash) error {
	grantee := rec.Entitlement.Grantee
	if err := r.kv.Delete(key(prefixEnt, grantee[:], id[:])); err != nil {
		return fmt.Errorf("entitlement: delete: %w", err)
	}
	if err := r.kv.Delete(key(prefixIndex, id[:])); err != nil {
		return fmt.Errorf("entitlement: delete: %w", err)
	}
	ph, err := pairHash(rec.Entitlement.Scope, rec.Entitlement.Action)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := r.kv.Delete(key(prefixPair, grantee[:], ph[:], id[:])); err != nil {
		return fmt.Errorf("entitlement: delete: %w", err)
	}
	return nil
}

// Get returns the record with id.
func (r *Registry) Get(id types.Hash) (Record, error) {
	g, ok, err := r.kv.Get(key(prefixIndex, id[:]))
	if err != nil {
		return Record{}, fmt.Errorf("entitlement: load: %w", err)
	}
	if !ok || len(g) != types.AddressLength {
		return Record{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	b, ok, err := r.kv.Get(key(prefixEnt, g, id[:]))
	if err != nil {
		return Record{}, fmt.Errorf("entitlement: load: %w", err)
	}
	if !ok {
		return Record{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	rec, err := DecodeRecord(b)
	if err != nil {
		return Record{}, err
	}
	return rec, nil
}

type idRecord struct {
	id  types.Hash
	rec Record
}

// list returns grantee's records in id order, deleting (lazily) those that
// expired by height at or whose delegation chain was revoked or expired.
func (r *Registry) list(grantee types.Address, at uint64) ([]idRecord, error) {
	var all []idRecord
	p := key(prefixEnt, grantee[:])
	err := r.kv.Scan(p, func(k, v []byte) error {
		rec, err := DecodeRecord(v)
		if err != nil {
			return err
		}
		var id types.Hash
		copy(id[:], k[len(p):])
		all = append(all, idRecord{id, rec})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("entitlement: scan: %w", err)
	}
	out := all[:0]
	for _, ir := range all {
		alive, err := r.chainAlive(&ir.rec, at)
		if err != nil {
			return nil, err
		}
		if !alive {
			if err := r.remove(&ir.rec, ir.id); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, ir)
	}
	return out, nil
}

// chainAlive: the record has not expired and every ancestor still exists and
// has not expired.
func (r *Registry) chainAlive(rec *Record, at uint64) (bool, error) {
	cur := rec
	for range MaxDelegationDepth + 1 {
		if cur.Entitlement.Constraints.status(at) == expired {
			return false, nil
		}
		if cur.Entitlement.ParentID == nil {
			return true, nil
		}
		parent, err := r.Get(*cur.Entitlement.ParentID)
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		cur = &parent
	}
	return false, nil
}

// Grant stores a direct entitlement and returns its id (§7.2 instruction 30).
// An existing record with the same id is replaced only if it has expired.
func (r *Registry) Grant(granter, grantee types.Address, s Scope, a Action, c Constraints, at uint64) (types.Hash, error) {
	if err := s.Validate(); err != nil {
		return types.Hash{}, fmt.Errorf("%w: scope: %w", ErrInvalid, err)
	}
	if err := a.Validate(); err != nil {
		return types.Hash{}, fmt.Errorf("%w: action: %w", ErrInvalid, err)
	}
	if err := validConstraints(&c); err != nil {
		return types.Hash{}, err
	}
	e := Entitlement{Grantee: grantee, Scope: s, Action: a, Constraints: c}
	return r.insert(&Record{Entitlement: e, Granter: granter, CreatedAt: at}, at)
}

func (r *Registry) insert(rec *Record, at uint64) (types.Hash, error) {
	id, err := rec.Entitlement.ID()
	if err != nil {
		return types.Hash{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	held, err := r.list(rec.Entitlement.Grantee, at) // also drops expired ones, including an old id
	if err != nil {
		return types.Hash{}, err
	}
	for _, h := range held {
		if h.id == id {
			return types.Hash{}, fmt.Errorf("%w: %s", ErrExists, id)
		}
	}
	if len(held) >= MaxEntitlementsPerAddress {
		return types.Hash{}, fmt.Errorf("%w: %s holds %d entitlements", ErrLimit, rec.Entitlement.Grantee, len(held))
	}
	if err := r.put(rec); err != nil {
		return types.Hash{}, err
	}
	return id, nil
}

// Revoke deletes a revocable entitlement (instruction 31). The caller must be
// its granter or governance. Entitlements delegated from it stop working at
// once (their chain check fails) and are deleted lazily.
func (r *Registry) Revoke(caller types.Address, id types.Hash) error {
	rec, err := r.Get(id)
	if err != nil {
		return err
	}
	if caller != rec.Granter && caller != r.governance {
		return fmt.Errorf("%w: only the granter or governance may revoke", ErrUnauthorized)
	}
	if !rec.Entitlement.Constraints.Revocable {
		return fmt.Errorf("%w: entitlement is not revocable", ErrUnauthorized)
	}
	return r.remove(&rec, id)
}

// Delegate derives an entitlement for delegatee from parent, held by caller
// (instruction 32). The child keeps the parent's scope and action; its
// constraints must be strictly narrower (see Narrower); the chain may be at
// most MaxDelegationDepth long.
func (r *Registry) Delegate(caller types.Address, parentID types.Hash, delegatee types.Address, c Constraints, at uint64) (types.Hash, error) {
	parent, err := r.Get(parentID)
	if err != nil {
		return types.Hash{}, err
	}
	if parent.Entitlement.Grantee != caller {
		return types.Hash{}, fmt.Errorf("%w: only the grantee may delegate", ErrUnauthorized)
	}
	alive, err := r.chainAlive(&parent, at)
	if err != nil {
		return types.Hash{}, err
	}
	if !alive || parent.Entitlement.Constraints.status(at) != live {
		return types.Hash{}, fmt.Errorf("%w: parent is not usable at %d", ErrDenied, at)
	}
	pc := &parent.Entitlement.Constraints
	if !pc.Delegatable || pc.DelegationDepthMax == 0 || parent.Depth+1 > MaxDelegationDepth {
		return types.Hash{}, fmt.Errorf("%w: parent is not delegatable", ErrUnauthorized)
	}
	if err := validConstraints(&c); err != nil {
		return types.Hash{}, err
	}
	if err := Narrower(&c, pc); err != nil {
		return types.Hash{}, err
	}
	pid := parentID
	e := Entitlement{Grantee: delegatee, Scope: parent.Entitlement.Scope, Action: parent.Entitlement.Action, Constraints: c, ParentID: &pid}
	return r.insert(&Record{Entitlement: e, Granter: caller, Depth: parent.Depth + 1, CreatedAt: at}, at)
}

// Narrower reports (as an error wrapping ErrNotNarrower) whether child is not
// strictly narrower than parent. Child must satisfy every rule:
//
//   - delegation_depth_max strictly smaller (this makes every delegation
//     strictly narrower and bounds the chain);
//   - validity window inside the parent's (an unset bound is unbounded);
//   - max_uses ≤ the parent's remaining uses (unlimited only under unlimited);
//   - max_amount_per_use and max_total_amount ≤ the parent's (remaining);
//   - rate limit no looser: max_uses ≤ and window_blocks ≥ the parent's;
//   - revocable if the parent is.
func Narrower(child, parent *Constraints) error {
	fail := func(why string) error { return fmt.Errorf("%w: %s", ErrNotNarrower, why) }
	if child.DelegationDepthMax >= parent.DelegationDepthMax {
		return fail("delegation_depth_max must decrease")
	}
	if parent.ValidFrom != nil && (child.ValidFrom == nil || *child.ValidFrom < *parent.ValidFrom) {
		return fail("valid_from earlier than the parent's")
	}
	if parent.ValidUntil != nil && (child.ValidUntil == nil || *child.ValidUntil > *parent.ValidUntil) {
		return fail("valid_until later than the parent's")
	}
	if parent.MaxUses != 0 && (child.MaxUses == 0 || child.MaxUses > parent.MaxUses-parent.UsedCount) {
		return fail("max_uses above the parent's remaining uses")
	}
	if parent.MaxAmountPerUse != nil && (child.MaxAmountPerUse == nil || *child.MaxAmountPerUse > *parent.MaxAmountPerUse) {
		return fail("max_amount_per_use above the parent's")
	}
	if parent.MaxTotalAmount != nil && (child.MaxTotalAmount == nil || *child.MaxTotalAmount > *parent.MaxTotalAmount-parent.TotalAmountUsed) {
		return fail("max_total_amount above the parent's remaining amount")
	}
	if pr := parent.RateLimit; pr != nil {
		cr := child.RateLimit
		if cr == nil || cr.MaxUses > pr.MaxUses || cr.WindowBlocks < pr.WindowBlocks {
			return fail("rate limit looser than the parent's")
		}
	}
	if parent.Revocable && !child.Revocable {
		return fail("child of a revocable entitlement must be revocable")
	}
	return nil
}

// Check reports whether grantee may perform action on scope at height at
// (§7.3 check): some live, non-exhausted entitlement of grantee — or a role
// assigned to grantee within its validity window — covers (scope, action).
// Global covers any scope and All any action. Expired records found on the
// way are deleted (lazy expiry); use counters are not touched.
func (r *Registry) Check(grantee types.Address, s Scope, a Action, at uint64) (bool, error) {
	held, err := r.list(grantee, at)
	if err != nil {
		return false, err
	}
	for _, h := range held {
		e := &h.rec.Entitlement
		if e.Constraints.status(at) == live && e.Scope.Covers(s) && e.Action.Covers(a) {
			return true, nil
		}
	}
	roles, err := r.AssignedRoles(grantee)
	if err != nil {
		return false, err
	}
	for _, rid := range roles {
		rr, err := r.GetRole(rid)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return false, err
		}
		if st := rr.Role.Constraints.status(at); st == expired || st == notYet {
			continue
		}
		if slices.ContainsFunc(rr.Role.Scopes, func(x Scope) bool { return x.Covers(s) }) &&
			slices.ContainsFunc(rr.Role.Actions, func(x Action) bool { return x.Covers(a) }) {
			return true, nil
		}
	}
	return false, nil
}

// InPool is the candidate filter of §4 step 7: runner holds a live,
// non-exhausted entitlement with exactly Scope::RunnerPool(pool) and
// Action::RunnerJoinPool(pool). Wildcards and roles do not admit runners to
// pools. It implements selection.PoolChecker.
//
// Only the runner's records for exactly that pair are read (the "p/" index);
// those found expired or cut from their delegation chain are deleted.
func (r *Registry) InPool(runner types.Address, pool []byte, at uint64) (bool, error) {
	s, a := RunnerPoolScope(pool), RunnerJoinPoolAction(pool)
	ph, err := pairHash(s, a)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	p := key(prefixPair, runner[:], ph[:])
	var ids []types.Hash
	if err := r.kv.Scan(p, func(k, _ []byte) error {
		var id types.Hash
		copy(id[:], k[len(p):])
		ids = append(ids, id)
		return nil
	}); err != nil {
		return false, fmt.Errorf("entitlement: scan: %w", err)
	}
	for _, id := range ids {
		rec, err := r.Get(id)
		if err != nil {
			return false, err
		}
		alive, err := r.chainAlive(&rec, at)
		if err != nil {
			return false, err
		}
		if !alive {
			if err := r.remove(&rec, id); err != nil {
				return false, err
			}
			continue
		}
		e := &rec.Entitlement
		if e.Constraints.status(at) == live && e.Scope.Equal(s) && e.Action.Equal(a) {
			return true, nil
		}
	}
	return false, nil
}

// Use consumes one use of entitlement id by grantee at height at, for amount
// (0 if the action carries none): it must be live, within max_uses,
// max_amount_per_use, max_total_amount and the rate limit — for the record
// and every ancestor, all of which are charged.
func (r *Registry) Use(grantee types.Address, id types.Hash, amount uint64, at uint64) error {
	rec, err := r.Get(id)
	if err != nil {
		return err
	}
	if rec.Entitlement.Grantee != grantee {
		return fmt.Errorf("%w: not the grantee", ErrUnauthorized)
	}
	alive, err := r.chainAlive(&rec, at)
	if err != nil {
		return err
	}
	if !alive {
		if err := r.remove(&rec, id); err != nil {
			return err
		}
		return fmt.Errorf("%w: expired or revoked", ErrDenied)
	}
	chain := []Record{rec}
	for cur := rec; cur.Entitlement.ParentID != nil; {
		p, err := r.Get(*cur.Entitlement.ParentID)
		if err != nil {
			return err
		}
		chain = append(chain, p)
		cur = p
	}
	for i := range chain {
		if err := charge(&chain[i].Entitlement.Constraints, amount, at); err != nil {
			return err
		}
	}
	for i := range chain {
		if err := r.put(&chain[i]); err != nil {
			return err
		}
	}
	return nil
}

func charge(c *Constraints, amount, at uint64) error {
	if c.status(at) != live {
		return fmt.Errorf("%w: not live at %d", ErrDenied, at)
	}
	if c.MaxAmountPerUse != nil && amount > *c.MaxAmountPerUse {
		return fmt.Errorf("%w: amount above max_amount_per_use", ErrDenied)
	}
	if c.MaxTotalAmount != nil && amount > *c.MaxTotalAmount-c.TotalAmountUsed {
		return fmt.Errorf("%w: amount above the remaining total", ErrDenied)
	}
	if rl := c.RateLimit; rl != nil {
		if at >= rl.WindowStart+rl.WindowBlocks || rl.WindowStart > at {
			rl.WindowStart, rl.WindowUsed = at-at%rl.WindowBlocks, 0
		}
		if rl.WindowUsed >= rl.MaxUses {
			return fmt.Errorf("%w: rate limit", ErrDenied)
		}
		rl.WindowUsed++
	}
	c.UsedCount++
	c.TotalAmountUsed += amount
	return nil
}

// List returns grantee's live records (expired ones are deleted on the way).
func (r *Registry) List(grantee types.Address, at uint64) ([]Record, error) {
	held, err := r.list(grantee, at)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(held))
	for i, h := range held {
		out[i] = h.rec
	}
	return out, nil
}

// CreateRole stores a role owned by creator (instruction 33).
func (r *Registry) CreateRole(creator types.Address, role Role) (types.Hash, error) {
	if len(role.Name) == 0 || len(role.Name) > MaxRoleNameBytes {
		return types.Hash{}, fmt.Errorf("%w: role name must be 1..%d bytes", ErrInvalid, MaxRoleNameBytes)
	}
	if len(role.Scopes) == 0 || len(role.Scopes) > MaxRoleScopes || len(role.Actions) == 0 || len(role.Actions) > MaxRoleActions {
		return types.Hash{}, fmt.Errorf("%w: a role needs 1..%d scopes and 1..%d actions", ErrInvalid, MaxRoleScopes, MaxRoleActions)
	}
	for _, s := range role.Scopes {
		if err := s.Validate(); err != nil {
			return types.Hash{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	for _, a := range role.Actions {
		if err := a.Validate(); err != nil {
			return types.Hash{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	if err := validConstraints(&role.Constraints); err != nil {
		return types.Hash{}, err
	}
	id := RoleID(creator, role.Name)
	if _, ok, err := r.kv.Get(key(prefixRole, id[:])); err != nil {
		return types.Hash{}, fmt.Errorf("entitlement: load: %w", err)
	} else if ok {
		return types.Hash{}, fmt.Errorf("%w: role %s", ErrExists, id)
	}
	b, err := codec.Marshal(&RoleRecord{Role: role, Creator: creator})
	if err != nil {
		return types.Hash{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := r.kv.Set(key(prefixRole, id[:]), b); err != nil {
		return types.Hash{}, fmt.Errorf("entitlement: store: %w", err)
	}
	return id, nil
}

// GetRole loads a role.
func (r *Registry) GetRole(id types.Hash) (RoleRecord, error) {
	b, ok, err := r.kv.Get(key(prefixRole, id[:]))
	if err != nil {
		return RoleRecord{}, fmt.Errorf("entitlement: load: %w", err)
	}
	if !ok {
		return RoleRecord{}, fmt.Errorf("%w: role %s", ErrNotFound, id)
	}
	return DecodeRoleRecord(b)
}

// AssignedRoles lists the role ids assigned to a, ascending.
func (r *Registry) AssignedRoles(a types.Address) ([]types.Hash, error) {
	var out []types.Hash
	p := key(prefixAssign, a[:])
	err := r.kv.Scan(p, func(k, _ []byte) error {
		var id types.Hash
		copy(id[:], k[len(p):])
		out = append(out, id)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("entitlement: scan: %w", err)
	}
	return out, nil
}

// AssignRole assigns a role (instruction 34); only its creator may.
func (r *Registry) AssignRole(caller types.Address, roleID types.Hash, assignee types.Address) error {
	rr, err := r.GetRole(roleID)
	if err != nil {
		return err
	}
	if rr.Creator != caller {
		return fmt.Errorf("%w: only the role creator may assign it", ErrUnauthorized)
	}
	held, err := r.AssignedRoles(assignee)
	if err != nil {
		return err
	}
	if slices.Contains(held, roleID) {
		return fmt.Errorf("%w: role already assigned", ErrExists)
	}
	if len(held) >= MaxRolesPerAddress {
		return fmt.Errorf("%w: %s holds %d roles", ErrLimit, assignee, len(held))
	}
	if err := r.kv.Set(key(prefixAssign, assignee[:], roleID[:]), []byte{1}); err != nil {
		return fmt.Errorf("entitlement: store: %w", err)
	}
	return nil
}

// RevokeRole removes an assignment (instruction 35); only the creator may.
func (r *Registry) RevokeRole(caller types.Address, roleID types.Hash, assignee types.Address) error {
	rr, err := r.GetRole(roleID)
	if err != nil {
		return err
	}
	if rr.Creator != caller {
		return fmt.Errorf("%w: only the role creator may revoke it", ErrUnauthorized)
	}
	k := key(prefixAssign, assignee[:], roleID[:])
	if _, ok, err := r.kv.Get(k); err != nil {
		return fmt.Errorf("entitlement: load: %w", err)
	} else if !ok {
		return fmt.Errorf("%w: role not assigned", ErrNotFound)
	}
	if err := r.kv.Delete(k); err != nil {
		return fmt.Errorf("entitlement: delete: %w", err)
	}
	return nil
}

// MemKV is an in-memory KV for tests and tools.
type MemKV struct{ m map[string][]byte }

// NewMemKV returns an empty MemKV.
func NewMemKV() *MemKV { return &MemKV{m: map[string][]byte{}} }

// Get implements KV.
func (s *MemKV) Get(k []byte) ([]byte, bool, error) {
	v, ok := s.m[string(k)]
	return bytes.Clone(v), ok, nil
}

// Set implements KV.
func (s *MemKV) Set(k, v []byte) error { s.m[string(k)] = bytes.Clone(v); return nil }

// Delete implements KV.
func (s *MemKV) Delete(k []byte) error { delete(s.m, string(k)); return nil }

// Scan implements KV in ascending key order.
func (s *MemKV) Scan(prefix []byte, fn func(k, v []byte) error) error {
	var keys []string
	for k := range s.m {
		if bytes.HasPrefix([]byte(k), prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn([]byte(k), bytes.Clone(s.m[k])); err != nil {
			return err
		}
	}
	return nil
}

// Len is the number of stored keys.
func (s *MemKV) Len() int { return len(s.m) }
