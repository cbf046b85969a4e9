package sdk

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Light-client errors. A refused proof wraps one of these or one of
// chain/consensus's (ErrInvalidQC, ErrInvalidSignature, ErrInvalidBlock,
// ErrUncommitted); test with errors.Is.
var (
	// ErrUnknownEpoch: the proof is anchored in an epoch whose validator
	// set the light client does not hold.
	ErrUnknownEpoch = errors.New("light client: anchor is in an epoch whose validator set is not known")
	// ErrBadProof: the state proof does not verify against the certified
	// header's state root, or is for another key.
	ErrBadProof = errors.New("light client: state proof does not verify against the certified root")
)

// LightConfig is what a light client trusts: the chain ID, the epoch
// length and the genesis validator set (address, BLS key, stake in whole
// CBY, in genesis order), e.g. from the network's genesis file.
type LightConfig struct {
	ChainID     uint64
	EpochLength uint64 // 0: the default, 3,600
	Validators  []consensus.Validator
}

// LightClient verifies state proofs end to end from the genesis validator
// set: the QC's BLS signature and quorum stake, the certified block's
// commitment to a header, then the Merkle proof against that header's
// state root (docs/CONSENSUS.md §8.8). It holds no keys and trusts no node.
type LightClient struct {
	chainID  uint64
	epochLen uint64
	sets     map[uint64]*consensus.ValidatorSet // by epoch
}

// NewLightClient checks the configured validator set.
func NewLightClient(cfg LightConfig) (*LightClient, error) {
	set, err := consensus.NewValidatorSet(cfg.Validators, consensus.BLS{})
	if err != nil {
		return nil, fmt.Errorf("light client: genesis validators: %w", err)
	}
	l := cfg.EpochLength
	if l == 0 {
		l = 3600
	}
	return &LightClient{chainID: cfg.ChainID, epochLen: l, sets: map[uint64]*consensus.ValidatorSet{0: set}}, nil
}

// Verified is a value the light client checked, and what it checked it
// against.
type Verified struct {
	Key    []byte
	Value  []byte // nil: the key is absent
	Header types.Header
	Anchor consensus.Anchor
	Epoch  uint64
	// Signers of the anchor's QC out of Validators, with their stake out
	// of TotalStake (whole CBY).
	Signers, Validators int
	Stake, TotalStake   uint64
}

// Verify checks a light proof for key.
func (lc *LightClient) Verify(key []byte, p *apitypes.LightProof) (*Verified, error) {
	if !bytes.Equal(p.Key, key) {
		return nil, fmt.Errorf("%w: proof is for key %x, not %x", ErrBadProof, []byte(p.Key), key)
	}
	var hdr types.Header
	if err := codec.Unmarshal(p.Header, &hdr); err != nil {
		return nil, fmt.Errorf("%w: header: %w", consensus.ErrUncommitted, err)
	}
	var a consensus.Anchor
	if err := codec.Unmarshal(p.Anchor, &a); err != nil {
		return nil, fmt.Errorf("%w: anchor: %w", consensus.ErrInvalidBlock, err)
	}
	if hdr.ChainID != lc.chainID {
		return nil, fmt.Errorf("%w: header of chain %d, not %d", consensus.ErrUncommitted, hdr.ChainID, lc.chainID)
	}
	epoch := consensus.EpochOf(a.Block.Height, lc.epochLen)
	set, ok := lc.sets[epoch]
	if !ok {
		return nil, fmt.Errorf("%w: epoch %d (block %d)", ErrUnknownEpoch, epoch, a.Block.Height)
	}
	if err := a.VerifyHeader(consensus.EpochDomain(lc.chainID, epoch), set, consensus.BLS{}, &hdr); err != nil {
		return nil, err
	}
	var val []byte
	if p.Value != nil {
		val = *p.Value
	}
	if err := VerifyProof(hdr.StateRoot, key, val, p.Proof); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadProof, err)
	}
	n, st := set.Signed(a.QC.Signers)
	return &Verified{Key: key, Value: val, Header: hdr, Anchor: a, Epoch: epoch,
		Signers: n, Validators: set.Len(), Stake: st, TotalStake: set.TotalStake()}, nil
}

// LightProof fetches GET /v1/light/proofs/{key}.
func (c *Client) LightProof(ctx context.Context, key []byte) (*apitypes.LightProof, error) {
	var p apitypes.LightProof
	return &p, c.do(ctx, http.MethodGet, "/v1/light/proofs/0x"+hex.EncodeToString(key), nil, &p)
}

// Fetch gets a light proof for key from c and verifies it.
func (lc *LightClient) Fetch(ctx context.Context, c *Client, key []byte) (*Verified, error) {
	p, err := c.LightProof(ctx, key)
	if err != nil {
		return nil, err
	}
	return lc.Verify(key, p)
}

// Account fetches and verifies an account (an empty account when the proof
// shows absence).
func (lc *LightClient) Account(ctx context.Context, c *Client, addr types.Address) (*state.Account, *Verified, error) {
	v, err := lc.Fetch(ctx, c, state.AccountKey(addr))
	if err != nil {
		return nil, nil, err
	}
	r := state.MapReader{}
	if v.Value != nil {
		r[string(v.Key)] = v.Value
	}
	acc, err := state.ReadAccount(r, addr)
	if err != nil {
		return nil, nil, err
	}
	return acc, v, nil
}
