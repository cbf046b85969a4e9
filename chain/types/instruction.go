package types

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/fxamacker/cbor/v2"
)

// InstructionKind tags the payload of a transaction. An empty payload is a
// plain value transfer; any other payload is the canonical CBOR array
// [kind, fields...] of exactly one instruction.
type InstructionKind uint64

// Instruction kinds. Numbers are consensus: never renumber.
const (
	KindCall           InstructionKind = 1 // call a handler of the actor in `to`
	KindDeploy         InstructionKind = 2 // deploy an actor (`to` is null)
	KindPublishLibrary InstructionKind = 3 // publish an account-scoped library
	KindRemoveLibrary  InstructionKind = 4 // remove an account-scoped library name

	// Relay Registry (0x…0B); `to` is the registry.
	KindRelayRegister   InstructionKind = 10 // register or update a relay; value adds stake
	KindRelayHeartbeat  InstructionKind = 11 // liveness and capacity report
	KindRelayDeregister InstructionKind = 12 // leave; the stake is returned after the unbonding delay
	KindStorageProof    InstructionKind = 13 // Storage Manager: a relay's answer to an availability challenge
	KindClaimRent       InstructionKind = 14 // Storage Manager: a relay's billing attestation for an epoch
	KindRefusePlacement InstructionKind = 15 // Storage Manager: a relay disowns a commitment's placement
	KindRepairPlacement InstructionKind = 17 // Storage Manager: a holder moves a shard off an unhealthy relay

	// Storage Manager (0x…0A); `to` is the manager.
	KindVolumeCreate   InstructionKind = 20 // create a CBFS volume
	KindCommitManifest InstructionKind = 21 // anchor a new manifest root (a StorageCommitment)
	KindRevokeToken    InstructionKind = 22 // revoke a capability token of a volume
	KindVolumeFund     InstructionKind = 23 // credit a volume's rent escrow (the value)

	// Off-chain compute (CIP-2). 30–35 are reserved for the Entitlement
	// Registry (docs/OFFCHAIN.md §1).
	KindRunnerRegister   InstructionKind = 40 // Runner Registry (0x…01): register or update; value adds self-bond
	KindRunnerHeartbeat  InstructionKind = 41 // Runner Registry: liveness
	KindRunnerDeregister InstructionKind = 42 // Runner Registry: leave; the self-bond is returned
	KindSubmitJob        InstructionKind = 43 // Job Dispatcher (0x…02): submit a JobSpec, escrow max_price + tip
	KindCommitResult     InstructionKind = 44 // Job Dispatcher: a committee member's result commitment
	KindSubmitResult     InstructionKind = 45 // Result Verifier (0x…03): the aggregator's verified result
	KindRevealResult     InstructionKind = 46 // Result Verifier: an individual reveal after the aggregator timeout
)

// baseKinds registers the actor, relay, storage, runner and job kinds
// declared in this file (kinds.go).
var baseKinds = []kindSpec{
	{KindCall, "call", LaneUser, newOf[Call]},
	{KindDeploy, "deploy", LaneUser, newOf[Deploy]},
	{KindPublishLibrary, "publish_library", LaneUser, newOf[PublishLibrary]},
	{KindRemoveLibrary, "remove_library", LaneUser, newOf[RemoveLibrary]},
	{KindRelayRegister, "relay_register", LaneUser, newOf[RelayRegister]},
	{KindRelayHeartbeat, "relay_heartbeat", LaneUser, newOf[RelayHeartbeat]},
	{KindRelayDeregister, "relay_deregister", LaneUser, newOf[RelayDeregister]},
	{KindStorageProof, "storage_proof", LaneUser, newOf[StorageProof]},
	{KindClaimRent, "claim_rent", LaneUser, newOf[ClaimRent]},
	{KindRefusePlacement, "refuse_placement", LaneUser, newOf[RefusePlacement]},
	{KindRepairPlacement, "repair_placement", LaneUser, newOf[RepairPlacement]},
	{KindVolumeCreate, "volume_create", LaneUser, newOf[VolumeCreate]},
	{KindCommitManifest, "commit_manifest", LaneUser, newOf[CommitManifest]},
	{KindRevokeToken, "revoke_token", LaneUser, newOf[RevokeToken]},
	{KindVolumeFund, "volume_fund", LaneUser, newOf[VolumeFund]},
	// What runners send is runner-lane traffic; submit_job (a user buying
	// compute) is a user transaction.
	{KindRunnerRegister, "runner_register", LaneRunner, newOf[RunnerRegister]},
	{KindRunnerHeartbeat, "runner_heartbeat", LaneRunner, newOf[RunnerHeartbeat]},
	{KindRunnerDeregister, "runner_deregister", LaneRunner, newOf[RunnerDeregister]},
	{KindSubmitJob, "submit_job", LaneUser, newOf[SubmitJob]},
	{KindCommitResult, "commit_result", LaneRunner, newOf[CommitResult]},
	{KindSubmitResult, "submit_verified_result", LaneRunner, newOf[SubmitResult]},
	{KindRevealResult, "reveal_result", LaneRunner, newOf[RevealResult]},
}

// Instruction is one decoded transaction payload.
type Instruction interface {
	InstructionKind() InstructionKind
}

// Call invokes Handler on the target actor with canonical-CBOR Args.
type Call struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	Handler string
	Args    Bytes
}

// Deploy creates an actor from Python source. Salt feeds the address
// derivation; InitHandler, if not empty, runs atomically with the deploy.
type Deploy struct {
	_           struct{} `cbor:",toarray"`
	Kind        InstructionKind
	Code        Bytes
	Salt        Bytes
	InitHandler string
	InitArgs    Bytes
	// Requires is the deployment manifest (spec 002 §15): the canonical
	// encoding of the entitlements the actor requires
	// (chain/offchain/entitlement.Manifest). Optional trailing element:
	// encoded only when set, so deploys without it keep their 5-element
	// form; an actor deployed without one gets no privileged host calls.
	Requires Bytes
}

type deployV1 struct {
	_           struct{} `cbor:",toarray"`
	Kind        InstructionKind
	Code        Bytes
	Salt        Bytes
	InitHandler string
	InitArgs    Bytes
}

type deployV2 struct {
	_           struct{} `cbor:",toarray"`
	Kind        InstructionKind
	Code        Bytes
	Salt        Bytes
	InitHandler string
	InitArgs    Bytes
	Requires    Bytes
}

// MarshalCBOR writes the 5-element form without a manifest and the
// 6-element form with one.
func (d Deploy) MarshalCBOR() ([]byte, error) {
	if len(d.Requires) == 0 {
		return codec.Marshal(deployV1{Kind: d.Kind, Code: d.Code, Salt: d.Salt, InitHandler: d.InitHandler, InitArgs: d.InitArgs})
	}
	return codec.Marshal(deployV2{Kind: d.Kind, Code: d.Code, Salt: d.Salt, InitHandler: d.InitHandler, InitArgs: d.InitArgs, Requires: d.Requires})
}

// UnmarshalCBOR accepts both forms; an explicitly empty manifest is not
// canonical (the encoder omits it) and is refused.
func (d *Deploy) UnmarshalCBOR(b []byte) error {
	n, err := arrayLen(b)
	if err != nil {
		return err
	}
	switch n {
	case 5:
		var v deployV1
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		*d = Deploy{Kind: v.Kind, Code: v.Code, Salt: v.Salt, InitHandler: v.InitHandler, InitArgs: v.InitArgs}
	case 6:
		var v deployV2
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		if len(v.Requires) == 0 {
			return fmt.Errorf("%w: deploy: an empty manifest must be omitted", codec.ErrNonCanonical)
		}
		*d = Deploy{Kind: v.Kind, Code: v.Code, Salt: v.Salt, InitHandler: v.InitHandler, InitArgs: v.InitArgs, Requires: v.Requires}
	default:
		return fmt.Errorf("deploy: %d elements, want 5 or 6", n)
	}
	return nil
}

// PublishLibrary publishes (or re-publishes) Name under the sender's account.
type PublishLibrary struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
	Name string
	Code Bytes
}

// RemoveLibrary removes Name from the sender's account; pins stay intact.
type RemoveLibrary struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
	Name string
}

// RelayRegister registers the sending key as a relay node. The sender must
// be the relay's node key (its address is the relay id).
type RelayRegister struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Addr     string // QUIC host:port
	PubKey   Bytes  // 33-byte compressed secp256k1 node key
	Capacity uint64 // bytes offered
}

// RelayHeartbeat reports liveness and use.
type RelayHeartbeat struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Used     uint64
	Capacity uint64
}

// RelayDeregister removes the sending relay.
type RelayDeregister struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
}

// VolumeCreate creates a volume; the first 20 bytes of Volume are the owner.
type VolumeCreate struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	Volume Hash
	K, M   uint64
}

// CommitManifest anchors version Version of a volume's manifest.
type CommitManifest struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	Volume  Hash
	Root    Hash
	Version uint64
	Size    uint64 // bytes stored (before erasure coding)
	// Placement summarises, per relay (sorted by relay id, unique), the
	// shards it holds for this version; challenges and rent follow it.
	// Optional trailing element: encoded only when set, so commitments
	// without it keep their 5-element form (docs/RELAY.md).
	Placement []RelayPlacement
}

// RelayPlacement is one relay's share of a volume: its shard bytes and
// count and the root of its placement tree (chain/storage/challenge).
type RelayPlacement struct {
	_          struct{} `cbor:",toarray"`
	Relay      Address
	Bytes      uint64
	Count      uint64
	ShardsRoot Hash
}

type commitManifestV1 struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	Volume  Hash
	Root    Hash
	Version uint64
	Size    uint64
}

type commitManifestV2 struct {
	_         struct{} `cbor:",toarray"`
	Kind      InstructionKind
	Volume    Hash
	Root      Hash
	Version   uint64
	Size      uint64
	Placement []RelayPlacement
}

// MarshalCBOR writes the 5-element form without a placement and the
// 6-element form with one.
func (c CommitManifest) MarshalCBOR() ([]byte, error) {
	if len(c.Placement) == 0 {
		return codec.Marshal(commitManifestV1{Kind: c.Kind, Volume: c.Volume, Root: c.Root, Version: c.Version, Size: c.Size})
	}
	return codec.Marshal(commitManifestV2{Kind: c.Kind, Volume: c.Volume, Root: c.Root, Version: c.Version, Size: c.Size, Placement: c.Placement})
}

// UnmarshalCBOR accepts both forms; an explicitly empty placement is not
// canonical (the encoder omits it) and is refused.
func (c *CommitManifest) UnmarshalCBOR(b []byte) error {
	n, err := arrayLen(b)
	if err != nil {
		return err
	}
	switch n {
	case 5:
		var v commitManifestV1
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		*c = CommitManifest{Kind: v.Kind, Volume: v.Volume, Root: v.Root, Version: v.Version, Size: v.Size}
	case 6:
		var v commitManifestV2
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		if len(v.Placement) == 0 {
			return fmt.Errorf("%w: commit_manifest: an empty placement must be omitted", codec.ErrNonCanonical)
		}
		*c = CommitManifest{Kind: v.Kind, Volume: v.Volume, Root: v.Root, Version: v.Version, Size: v.Size, Placement: v.Placement}
	default:
		return fmt.Errorf("commit_manifest: %d elements, want 5 or 6", n)
	}
	return nil
}

// VolumeFund credits the transaction value to a volume's rent escrow at
// the Storage Manager. Anyone may fund any live volume.
type VolumeFund struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	Volume Hash
}

// StorageProof is a relay's answer to its challenge for Volume in Epoch:
// the challenged placement leaf with its path to the relay's shards_root,
// and the challenged chunk of that shard with its path to the shard hash
// (chain/storage/challenge). The sender is the relay.
type StorageProof struct {
	_         struct{} `cbor:",toarray"`
	Kind      InstructionKind
	Volume    Hash
	Epoch     uint64
	ShardID   Hash
	ShardHash Hash
	ShardSize uint64
	LeafPath  []Hash
	Chunk     Bytes
	ChunkPath []Hash
}

// ClaimRent is a relay's billing attestation: it held its placement of each
// of Volumes during Epoch and answered the challenges; the Storage Manager
// pays the rent reserved for them from the volumes' escrow.
type ClaimRent struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	Epoch   uint64
	Volumes []Hash
}

// RefusePlacement is a relay declaring that version Version of a volume's
// commitment misstates what it holds: its placement entry is dropped (no
// challenges, no rent) so that the owner's repair moves the shards.
type RefusePlacement struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	Volume  Hash
	Version uint64
}

// RepairPlacement is a relay that holds part of a volume recording that
// it rebuilt one shard of an unhealthy relay (From) from K others and
// placed it on the healthy relay To (docs/RELAY.md, "Self-healing"). The
// shard is named by its placement leaf; LeafPath proves it is in From's
// committed placement at Version (empty when From holds it by an earlier
// repair). Readers find the shard at To from then on.
type RepairPlacement struct {
	_         struct{} `cbor:",toarray"`
	Kind      InstructionKind
	Volume    Hash
	Version   uint64
	From      Address
	To        Address
	ShardID   Hash
	ShardHash Hash
	ShardSize uint64
	LeafIndex uint64
	LeafPath  []Hash
}

// RevokeToken adds a capability token id to a volume's revocation list.
type RevokeToken struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	Volume  Hash
	TokenID Hash
}

// RunnerRegister registers (or updates) the sender as a runner of the
// off-chain compute market. The transaction value adds to the self-bond.
// Rates are base units; nil means zero.
type RunnerRegister struct {
	_                 struct{} `cbor:",toarray"`
	Kind              InstructionKind
	ResultKey         Bytes    // 32-byte Ed25519 public key that signs results
	JobTypes          []uint64 // 1 Llm, 2 Http, 3 Mcp, 4 Custom
	Models            []string
	Domains           []string // HTTP domains / domain sets served
	TEE               bool
	RateBase          *big.Int
	RatePerToken      *big.Int
	RatePerWallMs     *big.Int
	RatePerMemoryMiB  *big.Int
	MaxConcurrentJobs uint64
	MaxJobValue       *big.Int // declared max job value; stake ≥ 1.5 × this
	// Endpoint is the runner's public aggregator URL where committee
	// members push results. Optional trailing element: it is encoded only
	// when set, so registrations without it keep their 12-element form.
	Endpoint string
}

// runnerRegisterV1 is RunnerRegister without the optional endpoint.
type runnerRegisterV1 struct {
	_                 struct{} `cbor:",toarray"`
	Kind              InstructionKind
	ResultKey         Bytes
	JobTypes          []uint64
	Models            []string
	Domains           []string
	TEE               bool
	RateBase          *big.Int
	RatePerToken      *big.Int
	RatePerWallMs     *big.Int
	RatePerMemoryMiB  *big.Int
	MaxConcurrentJobs uint64
	MaxJobValue       *big.Int
}

// runnerRegisterV2 is RunnerRegister with the endpoint.
type runnerRegisterV2 struct {
	_                 struct{} `cbor:",toarray"`
	Kind              InstructionKind
	ResultKey         Bytes
	JobTypes          []uint64
	Models            []string
	Domains           []string
	TEE               bool
	RateBase          *big.Int
	RatePerToken      *big.Int
	RatePerWallMs     *big.Int
	RatePerMemoryMiB  *big.Int
	MaxConcurrentJobs uint64
	MaxJobValue       *big.Int
	Endpoint          string
}

// MarshalCBOR writes the 12-element form when Endpoint is empty and the
// 13-element form otherwise.
func (r RunnerRegister) MarshalCBOR() ([]byte, error) {
	v1 := runnerRegisterV1{Kind: r.Kind, ResultKey: r.ResultKey, JobTypes: r.JobTypes, Models: r.Models, Domains: r.Domains,
		TEE: r.TEE, RateBase: r.RateBase, RatePerToken: r.RatePerToken, RatePerWallMs: r.RatePerWallMs,
		RatePerMemoryMiB: r.RatePerMemoryMiB, MaxConcurrentJobs: r.MaxConcurrentJobs, MaxJobValue: r.MaxJobValue}
	if r.Endpoint == "" {
		return codec.Marshal(v1)
	}
	return codec.Marshal(runnerRegisterV2{Kind: v1.Kind, ResultKey: v1.ResultKey, JobTypes: v1.JobTypes, Models: v1.Models,
		Domains: v1.Domains, TEE: v1.TEE, RateBase: v1.RateBase, RatePerToken: v1.RatePerToken, RatePerWallMs: v1.RatePerWallMs,
		RatePerMemoryMiB: v1.RatePerMemoryMiB, MaxConcurrentJobs: v1.MaxConcurrentJobs, MaxJobValue: v1.MaxJobValue, Endpoint: r.Endpoint})
}

// UnmarshalCBOR accepts both forms; an explicitly empty endpoint is not
// canonical (the encoder omits it) and is refused.
func (r *RunnerRegister) UnmarshalCBOR(b []byte) error {
	n, err := arrayLen(b)
	if err != nil {
		return err
	}
	switch n {
	case 12:
		var v runnerRegisterV1
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		*r = RunnerRegister{Kind: v.Kind, ResultKey: v.ResultKey, JobTypes: v.JobTypes, Models: v.Models, Domains: v.Domains,
			TEE: v.TEE, RateBase: v.RateBase, RatePerToken: v.RatePerToken, RatePerWallMs: v.RatePerWallMs,
			RatePerMemoryMiB: v.RatePerMemoryMiB, MaxConcurrentJobs: v.MaxConcurrentJobs, MaxJobValue: v.MaxJobValue}
	case 13:
		var v runnerRegisterV2
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		if v.Endpoint == "" {
			return fmt.Errorf("%w: runner_register: an empty endpoint must be omitted", codec.ErrNonCanonical)
		}
		*r = RunnerRegister{Kind: v.Kind, ResultKey: v.ResultKey, JobTypes: v.JobTypes, Models: v.Models, Domains: v.Domains,
			TEE: v.TEE, RateBase: v.RateBase, RatePerToken: v.RatePerToken, RatePerWallMs: v.RatePerWallMs,
			RatePerMemoryMiB: v.RatePerMemoryMiB, MaxConcurrentJobs: v.MaxConcurrentJobs, MaxJobValue: v.MaxJobValue, Endpoint: v.Endpoint}
	default:
		return fmt.Errorf("runner_register: %d elements, want 12 or 13", n)
	}
	return nil
}

// RunnerHeartbeat reports the sending runner alive.
type RunnerHeartbeat struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
}

// RunnerDeregister removes the sending runner and returns its self-bond.
type RunnerDeregister struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
}

// SubmitJob submits a job; Spec is the canonical CBOR JobSpec
// (chain/offchain/job). The dispatcher sets job_id, submitter and
// submitted_at.
type SubmitJob struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
	Spec Bytes
}

// CommitResult is a committee member's commitment
// Keccak256(result || signature) for a job.
type CommitResult struct {
	_          struct{} `cbor:",toarray"`
	Kind       InstructionKind
	JobID      Hash
	Commitment Hash
}

// SubmitResult is submit_verified_result(job_id, Submission); Submission is
// the canonical CBOR verify.Submission.
type SubmitResult struct {
	_          struct{} `cbor:",toarray"`
	Kind       InstructionKind
	JobID      Hash
	Submission Bytes
}

// RevealResult is a committee member's individual reveal once the
// aggregator has timed out; Reveal is the canonical CBOR verify.Reveal.
type RevealResult struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	JobID  Hash
	Reveal Bytes
}

func (RevealResult) InstructionKind() InstructionKind     { return KindRevealResult }
func (RunnerRegister) InstructionKind() InstructionKind   { return KindRunnerRegister }
func (RunnerHeartbeat) InstructionKind() InstructionKind  { return KindRunnerHeartbeat }
func (RunnerDeregister) InstructionKind() InstructionKind { return KindRunnerDeregister }
func (SubmitJob) InstructionKind() InstructionKind        { return KindSubmitJob }
func (CommitResult) InstructionKind() InstructionKind     { return KindCommitResult }
func (SubmitResult) InstructionKind() InstructionKind     { return KindSubmitResult }

func (RelayRegister) InstructionKind() InstructionKind   { return KindRelayRegister }
func (RelayHeartbeat) InstructionKind() InstructionKind  { return KindRelayHeartbeat }
func (RelayDeregister) InstructionKind() InstructionKind { return KindRelayDeregister }
func (VolumeCreate) InstructionKind() InstructionKind    { return KindVolumeCreate }
func (CommitManifest) InstructionKind() InstructionKind  { return KindCommitManifest }
func (RevokeToken) InstructionKind() InstructionKind     { return KindRevokeToken }
func (VolumeFund) InstructionKind() InstructionKind      { return KindVolumeFund }
func (StorageProof) InstructionKind() InstructionKind    { return KindStorageProof }
func (ClaimRent) InstructionKind() InstructionKind       { return KindClaimRent }
func (RefusePlacement) InstructionKind() InstructionKind { return KindRefusePlacement }
func (RepairPlacement) InstructionKind() InstructionKind { return KindRepairPlacement }

func (Call) InstructionKind() InstructionKind           { return KindCall }
func (Deploy) InstructionKind() InstructionKind         { return KindDeploy }
func (PublishLibrary) InstructionKind() InstructionKind { return KindPublishLibrary }
func (RemoveLibrary) InstructionKind() InstructionKind  { return KindRemoveLibrary }

// arrayLen is the element count of the CBOR array b, for instructions that
// grew an optional trailing element (the encoder omits it when empty, so the
// short form stays the canonical encoding of old instructions).
func arrayLen(b []byte) (int, error) {
	var head []cbor.RawMessage
	if err := codec.Unmarshal(b, &head); err != nil {
		return 0, err
	}
	return len(head), nil
}

// DecodeInstruction decodes a non-empty payload. An empty payload returns
// (nil, nil): a plain transfer.
func DecodeInstruction(payload []byte) (Instruction, error) {
	if len(payload) == 0 {
		return nil, nil
	}
	var head []cbor.RawMessage
	if err := codec.Unmarshal(payload, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	if len(head) == 0 {
		return nil, fmt.Errorf("%w: empty instruction array", ErrBadPayload)
	}
	var kind InstructionKind
	if err := codec.Unmarshal(head[0], &kind); err != nil {
		return nil, fmt.Errorf("%w: instruction kind: %v", ErrBadPayload, err)
	}
	in, ok := newInstruction(kind)
	if !ok {
		return nil, fmt.Errorf("%w: unknown instruction kind %d", ErrBadPayload, uint64(kind))
	}
	if err := codec.Unmarshal(payload, in); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadPayload, kind, err)
	}
	return in, nil
}
