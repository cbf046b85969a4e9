package types

import (
	"fmt"

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
	KindRelayDeregister InstructionKind = 12 // leave; the stake is returned

	// Storage Manager (0x…0A); `to` is the manager.
	KindVolumeCreate   InstructionKind = 20 // create a CBFS volume
	KindCommitManifest InstructionKind = 21 // anchor a new manifest root (a StorageCommitment)
	KindRevokeToken    InstructionKind = 22 // revoke a capability token of a volume
)

func (k InstructionKind) String() string {
	switch k {
	case KindCall:
		return "call"
	case KindDeploy:
		return "deploy"
	case KindPublishLibrary:
		return "publish_library"
	case KindRemoveLibrary:
		return "remove_library"
	case KindRelayRegister:
		return "relay_register"
	case KindRelayHeartbeat:
		return "relay_heartbeat"
	case KindRelayDeregister:
		return "relay_deregister"
	case KindVolumeCreate:
		return "volume_create"
	case KindCommitManifest:
		return "commit_manifest"
	case KindRevokeToken:
		return "revoke_token"
	}
	return fmt.Sprintf("kind(%d)", uint64(k))
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
}

// RevokeToken adds a capability token id to a volume's revocation list.
type RevokeToken struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	Volume  Hash
	TokenID Hash
}

func (RelayRegister) InstructionKind() InstructionKind   { return KindRelayRegister }
func (RelayHeartbeat) InstructionKind() InstructionKind  { return KindRelayHeartbeat }
func (RelayDeregister) InstructionKind() InstructionKind { return KindRelayDeregister }
func (VolumeCreate) InstructionKind() InstructionKind    { return KindVolumeCreate }
func (CommitManifest) InstructionKind() InstructionKind  { return KindCommitManifest }
func (RevokeToken) InstructionKind() InstructionKind     { return KindRevokeToken }

func (Call) InstructionKind() InstructionKind           { return KindCall }
func (Deploy) InstructionKind() InstructionKind         { return KindDeploy }
func (PublishLibrary) InstructionKind() InstructionKind { return KindPublishLibrary }
func (RemoveLibrary) InstructionKind() InstructionKind  { return KindRemoveLibrary }

// EncodeInstruction returns the canonical payload bytes for in.
func EncodeInstruction(in Instruction) ([]byte, error) {
	switch v := in.(type) {
	case *Call:
		v.Kind = KindCall
	case *Deploy:
		v.Kind = KindDeploy
	case *PublishLibrary:
		v.Kind = KindPublishLibrary
	case *RemoveLibrary:
		v.Kind = KindRemoveLibrary
	case *RelayRegister:
		v.Kind = KindRelayRegister
	case *RelayHeartbeat:
		v.Kind = KindRelayHeartbeat
	case *RelayDeregister:
		v.Kind = KindRelayDeregister
	case *VolumeCreate:
		v.Kind = KindVolumeCreate
	case *CommitManifest:
		v.Kind = KindCommitManifest
	case *RevokeToken:
		v.Kind = KindRevokeToken
	default:
		return nil, fmt.Errorf("encode instruction: unsupported type %T", in)
	}
	return codec.Marshal(in)
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
	var in Instruction
	switch kind {
	case KindCall:
		in = &Call{}
	case KindDeploy:
		in = &Deploy{}
	case KindPublishLibrary:
		in = &PublishLibrary{}
	case KindRemoveLibrary:
		in = &RemoveLibrary{}
	case KindRelayRegister:
		in = &RelayRegister{}
	case KindRelayHeartbeat:
		in = &RelayHeartbeat{}
	case KindRelayDeregister:
		in = &RelayDeregister{}
	case KindVolumeCreate:
		in = &VolumeCreate{}
	case KindCommitManifest:
		in = &CommitManifest{}
	case KindRevokeToken:
		in = &RevokeToken{}
	default:
		return nil, fmt.Errorf("%w: unknown instruction kind %d", ErrBadPayload, uint64(kind))
	}
	if err := codec.Unmarshal(payload, in); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadPayload, kind, err)
	}
	return in, nil
}
