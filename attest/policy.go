package attest

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// MeasurementSize is the size of MRENCLAVE and MRSIGNER.
const MeasurementSize = 32

// Policy says which enclaves are trusted. An enclave matches if
//   - UniqueID is set and equals its MRENCLAVE (exactly this build), and/or
//   - SignerID is set and equals its MRSIGNER, its product id is ProductID
//     and its security version is at least MinSecurityVersion (any build
//     signed by this key for this product, not older than the minimum);
//
// and it is not a debug enclave (unless AllowDebug) and its platform's TCB
// is up to date (unless AllowOutdatedTCB, which still refuses a revoked or
// unknown TCB). AllowSimulation admits the simulation backend and, with
// neither id set, any measurement: it is for devnets only, and a policy
// without it must pin UniqueID or SignerID.
//
// Encoded as the canonical CBOR array [unique_id, signer_id, product_id,
// min_security_version, allow_debug, allow_outdated_tcb, allow_simulation]
// (ids are empty byte strings when unset).
type Policy struct {
	_                  struct{}    `cbor:",toarray"`
	UniqueID           types.Bytes `json:"unique_id,omitempty"`
	SignerID           types.Bytes `json:"signer_id,omitempty"`
	ProductID          uint64      `json:"product_id"`
	MinSecurityVersion uint64      `json:"min_security_version"`
	AllowDebug         bool        `json:"allow_debug"`
	AllowOutdatedTCB   bool        `json:"allow_outdated_tcb"`
	AllowSimulation    bool        `json:"allow_simulation"`
}

// DevPolicy accepts any enclave, debug enclaves, outdated TCBs and the
// simulation backend: the policy of a devnet.
func DevPolicy() Policy {
	return Policy{AllowDebug: true, AllowOutdatedTCB: true, AllowSimulation: true}
}

// IsZero reports whether p is the zero policy (nothing configured).
func (p *Policy) IsZero() bool {
	return len(p.UniqueID) == 0 && len(p.SignerID) == 0 && p.ProductID == 0 && p.MinSecurityVersion == 0 &&
		!p.AllowDebug && !p.AllowOutdatedTCB && !p.AllowSimulation
}

// Validate checks the policy's shape.
func (p *Policy) Validate() error {
	if n := len(p.UniqueID); n != 0 && n != MeasurementSize {
		return fmt.Errorf("%w: unique_id is %d bytes, want %d", ErrPolicy, n, MeasurementSize)
	}
	if n := len(p.SignerID); n != 0 && n != MeasurementSize {
		return fmt.Errorf("%w: signer_id is %d bytes, want %d", ErrPolicy, n, MeasurementSize)
	}
	if p.ProductID > 0xffff || p.MinSecurityVersion > 0xffff {
		return fmt.Errorf("%w: product_id and min_security_version are 16-bit", ErrPolicy)
	}
	if len(p.SignerID) == 0 && (p.ProductID != 0 || p.MinSecurityVersion != 0) {
		return fmt.Errorf("%w: product_id and min_security_version need a signer_id", ErrPolicy)
	}
	if !p.AllowSimulation && len(p.UniqueID) == 0 && len(p.SignerID) == 0 {
		return fmt.Errorf("%w: a policy must pin unique_id or signer_id (only a dev policy with allow_simulation may leave both open)", ErrPolicy)
	}
	return nil
}

// Check applies the policy to authentic claims.
func (p *Policy) Check(c *Claims) error {
	if c.Backend == BackendSimulation && !p.AllowSimulation {
		return fmt.Errorf("%w: SIMULATION evidence is refused by every non-dev policy", ErrPolicy)
	}
	if len(p.UniqueID) != 0 && string(p.UniqueID) != string(c.UniqueID) {
		return fmt.Errorf("%w: unique id %x is not the policy's %x", ErrPolicy, []byte(c.UniqueID), []byte(p.UniqueID))
	}
	if len(p.SignerID) != 0 {
		if string(p.SignerID) != string(c.SignerID) {
			return fmt.Errorf("%w: signer id %x is not the policy's %x", ErrPolicy, []byte(c.SignerID), []byte(p.SignerID))
		}
		if c.ProductID != p.ProductID {
			return fmt.Errorf("%w: product id %d, policy wants %d", ErrPolicy, c.ProductID, p.ProductID)
		}
		if c.SecurityVersion < p.MinSecurityVersion {
			return fmt.Errorf("%w: security version %d below the policy's minimum %d", ErrPolicy, c.SecurityVersion, p.MinSecurityVersion)
		}
	}
	if c.Debug && !p.AllowDebug {
		return fmt.Errorf("%w: debug enclave (its memory is readable by the host)", ErrPolicy)
	}
	switch c.TCB {
	case TCBUpToDate:
	case TCBRevoked, TCBUnknown:
		return fmt.Errorf("%w: TCB status %s", ErrPolicy, c.TCB)
	default:
		if !p.AllowOutdatedTCB {
			return fmt.Errorf("%w: TCB status %s (the platform needs updates; allow_outdated_tcb admits it)", ErrPolicy, c.TCB)
		}
	}
	return nil
}

// Encode returns the canonical encoding.
func (p *Policy) Encode() ([]byte, error) { return codec.Marshal(p) }

// ID is Keccak256("cowboy-tee-policy-v1:" || CBOR(policy)).
func (p *Policy) ID() types.Hash {
	b, err := p.Encode()
	if err != nil {
		return types.Hash{}
	}
	return types.Keccak256([]byte("cowboy-tee-policy-v1:"), b)
}

// DecodePolicy decodes and validates a canonical policy.
func DecodePolicy(b []byte) (*Policy, error) {
	var p Policy
	if err := codec.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: decode: %v", ErrPolicy, err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}
