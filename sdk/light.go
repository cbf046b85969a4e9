package sdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
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
	// ErrBadHandoff: an epoch hand-off does not prove the next validator
	// set (not the epoch's last header, or the epoch record does not
	// verify or is not the next epoch's).
	ErrBadHandoff = errors.New("light client: epoch hand-off does not prove the next validator set")
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

// Epochs returns the highest epoch whose validator set the client holds.
func (lc *LightClient) Epochs() uint64 { return uint64(len(lc.sets)) - 1 }

// AddHandoff verifies the hand-off from the client's highest known epoch k
// to k+1 and, if it proves epoch k+1's validator set, adopts that set:
// a block certified by epoch k's set (in k's signing domain) commits to a
// header at height (k+1)·epochLength, the epoch's last block, and the
// epoch record proven against that header's state root is epoch k+1's,
// starting at the next height (docs/CONSENSUS.md §8.8).
func (lc *LightClient) AddHandoff(h *apitypes.LightHandoff) error {
	k := lc.Epochs()
	if h.Epoch != k {
		return fmt.Errorf("%w: hand-off from epoch %d, the client holds up to epoch %d", ErrBadHandoff, h.Epoch, k)
	}
	var hdr types.Header
	if err := codec.Unmarshal(h.Header, &hdr); err != nil {
		return fmt.Errorf("%w: header: %w", ErrBadHandoff, err)
	}
	var a consensus.Anchor
	if err := codec.Unmarshal(h.Anchor, &a); err != nil {
		return fmt.Errorf("%w: anchor: %w", ErrBadHandoff, err)
	}
	if hdr.ChainID != lc.chainID || hdr.Height != (k+1)*lc.epochLen {
		return fmt.Errorf("%w: header %d of chain %d is not the last block of epoch %d", ErrBadHandoff, hdr.Height, hdr.ChainID, k)
	}
	if err := a.VerifyHeader(consensus.EpochDomain(lc.chainID, k), lc.sets[k], consensus.BLS{}, &hdr); err != nil {
		return fmt.Errorf("%w: %w", ErrBadHandoff, err)
	}
	key := validators.EpochKey()
	if !bytes.Equal(h.Key, key) || len(h.Value) == 0 {
		return fmt.Errorf("%w: not the epoch record", ErrBadHandoff)
	}
	if err := VerifyProof(hdr.StateRoot, key, h.Value, h.Proof); err != nil {
		return fmt.Errorf("%w: %w", ErrBadHandoff, err)
	}
	var ep validators.Epoch
	if err := codec.Unmarshal(h.Value, &ep); err != nil {
		return fmt.Errorf("%w: epoch record: %w", ErrBadHandoff, err)
	}
	if ep.Number != k+1 || ep.StartHeight != hdr.Height+1 {
		return fmt.Errorf("%w: record of epoch %d from height %d, want epoch %d from %d", ErrBadHandoff, ep.Number, ep.StartHeight, k+1, hdr.Height+1)
	}
	set, err := consensus.NewValidatorSet(ep.ConsensusSet(), consensus.BLS{})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadHandoff, err)
	}
	lc.sets[k+1] = set
	return nil
}

// Sync follows the validator-set hand-offs from the client's highest known
// epoch up to epoch, fetching them from c.
func (lc *LightClient) Sync(ctx context.Context, c *Client, epoch uint64) error {
	for lc.Epochs() < epoch {
		var hs apitypes.LightHandoffs
		path := "/v1/light/handoffs?from=" + strconv.FormatUint(lc.Epochs(), 10)
		if err := c.do(ctx, http.MethodGet, path, nil, &hs); err != nil {
			return err
		}
		if len(hs.Handoffs) == 0 {
			return fmt.Errorf("%w: the node has no hand-off from epoch %d", ErrUnknownEpoch, lc.Epochs())
		}
		for i := range hs.Handoffs {
			if lc.Epochs() >= epoch {
				break
			}
			if err := lc.AddHandoff(&hs.Handoffs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Fetch gets a light proof for key from c and verifies it, first following
// the epoch hand-offs (Sync) up to the proof's epoch.
func (lc *LightClient) Fetch(ctx context.Context, c *Client, key []byte) (*Verified, error) {
	p, err := c.Chain().LightProof(ctx, key)
	if err != nil {
		return nil, err
	}
	var a consensus.Anchor
	if err := codec.Unmarshal(p.Anchor, &a); err != nil {
		return nil, fmt.Errorf("%w: anchor: %w", consensus.ErrInvalidBlock, err)
	}
	if e := consensus.EpochOf(a.Block.Height, lc.epochLen); e > lc.Epochs() {
		if err := lc.Sync(ctx, c, e); err != nil {
			return nil, err
		}
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
