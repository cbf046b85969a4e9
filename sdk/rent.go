package sdk

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/rent"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// State rent and storage bonds (spec 002 §4.4, §17.5; docs/RENT.md): the
// rent module's instructions, sent to types.RentModuleAddress, its records
// read through state proofs, and the archive an evicted actor is restored
// from. A failure's receipt carries the module's code (ErrActorDormant,
// ErrRestoreMismatch, ErrRentDebt, ErrSponsorBalance through ReceiptErr).

// Rent errors (receipt codes of chain/system/rent).
var (
	ErrRentNoActor      = errors.New("no actor at the address")
	ErrSponsorBalance   = errors.New("the sponsor's balance does not cover the sponsorship")
	ErrActorDormant     = errors.New("the actor was evicted for unpaid rent")
	ErrRentDebt         = errors.New("the actor's rent debt is unpaid")
	ErrRestoreMismatch  = errors.New("the archive does not match the root kept at eviction")
	ErrNotActorOwner    = errors.New("not the actor's owner")
	ErrBadQuota         = errors.New("quota outside the allowed range")
	ErrRentOff          = errors.New("the chain runs without state rent")
	ErrArchiveIncorrect = errors.New("archive inconsistent with the node's state")
)

func rentSentinel(c system.Code) error {
	switch c {
	case system.CodeRentNoActor:
		return ErrRentNoActor
	case system.CodeSponsorBalance:
		return ErrSponsorBalance
	case system.CodeActorDormant:
		return ErrActorDormant
	case system.CodeRentDebt:
		return ErrRentDebt
	case system.CodeRestoreMismatch:
		return ErrRestoreMismatch
	case system.CodeNotActorOwner:
		return ErrNotActorOwner
	case system.CodeBadQuota:
		return ErrBadQuota
	case system.CodeRentOff:
		return ErrRentOff
	}
	return nil
}

// RentService is the client's service for actor state rent and storage
// bonds (docs/RENT.md): proven rent records and archives of an actor's
// storage; signed payments, sponsorship, bonds and restores.
type RentService struct{ c *Client }

// Rent returns the service for actor state rent.
func (c *Client) Rent() *RentService { return &RentService{c: c} }

// AccountRent is the Rent service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes;
// its reads are those of RentService.
type AccountRent struct {
	*RentService
	a *Account
}

// Rent returns the Rent service bound to a.
func (a *Account) Rent() *AccountRent { return &AccountRent{RentService: a.c.Rent(), a: a} }

// Send builds, signs and submits a rent instruction (types.RentPay,
// RentSponsor, StorageBond, RentRestore); value goes with rent_pay only.
func (s *AccountRent) Send(ctx context.Context, in types.Instruction, value *big.Int, o TxOptions) (*types.Tx, error) {
	to := types.RentModuleAddress
	if value == nil {
		value = new(big.Int)
	}
	payload, err := types.EncodeInstruction(in)
	if err != nil {
		return nil, err
	}
	if o.CyclesLimit == 0 {
		o.CyclesLimit = 200_000
	}
	if o.CellsLimit == 0 {
		o.CellsLimit = 20_000 + 2*uint64(len(payload))
	}
	return s.a.send(ctx, TxRequest{To: &to, Value: value, Instruction: in, Options: o})
}

// Pay pays value toward actor's rent: its debt first, the rest prepaid.
func (s *AccountRent) Pay(ctx context.Context, actor types.Address, value *big.Int, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.RentPay{Actor: actor}, value, o)
}

// Sponsor prepays epochs epochs of actor's rent from the account.
func (s *AccountRent) Sponsor(ctx context.Context, actor types.Address, epochs uint64, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.RentSponsor{Actor: actor, Epochs: epochs}, nil, o)
}

// Bond sets actor's storage quota (its owner only), locking or
// returning the bond.
func (s *AccountRent) Bond(ctx context.Context, actor types.Address, quota uint64, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.StorageBond{Actor: actor, Quota: quota}, nil, o)
}

// provenValue reads state key k at height (nil: head) and checks its proof
// against the state root the node reports with it.
func (s *RentService) provenValue(ctx context.Context, k []byte, height *uint64) ([]byte, uint64, types.Hash, error) {
	p, err := s.c.Chain().Proof(ctx, k, height)
	if err != nil {
		return nil, 0, types.Hash{}, err
	}
	var val []byte
	if p.Value != nil {
		val = *p.Value
	}
	if err := VerifyProof(p.StateRoot, k, val, p.Proof); err != nil {
		return nil, 0, types.Hash{}, fmt.Errorf("%w: key %x: %v", ErrArchiveIncorrect, k, err)
	}
	return val, p.Height, p.StateRoot, nil
}

// Account returns actor's rent record (nil: the actor pays no rent and
// holds no bond), proven against the head's state root.
func (s *RentService) Account(ctx context.Context, actor types.Address) (*rent.Account, error) {
	b, _, _, err := s.provenValue(ctx, rent.AccountKey(actor), nil)
	if err != nil || b == nil {
		return nil, err
	}
	var acc rent.Account
	if err := codec.Unmarshal(b, &acc); err != nil {
		return nil, fmt.Errorf("rent account %s: %w", actor, err)
	}
	return &acc, nil
}

// RentArchive is an actor's storage as fetched before eviction: every slot
// proven against StateRoot at Height. Root is rent.ArchiveRoot of its
// chunks, the root the chain keeps at eviction.
type RentArchive struct {
	_         struct{}             `cbor:",toarray"`
	Actor     types.Address        `json:"actor"`
	Height    uint64               `json:"height"`
	StateRoot types.Hash           `json:"state_root"`
	Root      types.Hash           `json:"root"`
	Entries   []types.StorageEntry `json:"entries"`
}

// ArchiveActor fetches actor's storage (all slots but the chain's reserved
// ones) with a proof of each against one state root, and returns it as an
// archive. Run it while the actor is live (the EvictionImminent event is
// the signal): eviction prunes the storage.
func (s *RentService) Archive(ctx context.Context, actor types.Address) (*RentArchive, error) {
	var keys [][]byte
	var height uint64
	cursor := ""
	for {
		page, err := s.c.Actors().State(ctx, actor, "", cursor, 1000)
		if err != nil {
			return nil, err
		}
		if height == 0 {
			height = page.Height
		}
		for _, e := range page.Entries {
			if string(e.Key) == string(actors.KeyOwner) || string(e.Key) == string(actors.KeyInitialized) {
				continue
			}
			keys = append(keys, append([]byte(nil), e.Key...))
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	ar := &RentArchive{Actor: actor, Height: height, Entries: []types.StorageEntry{}}
	for _, k := range keys {
		v, h, root, err := s.provenValue(ctx, state.StorageKey(actor, k), &height)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, fmt.Errorf("%w: slot %q vanished at height %d", ErrArchiveIncorrect, k, h)
		}
		if ar.StateRoot != (types.Hash{}) && root != ar.StateRoot {
			return nil, fmt.Errorf("%w: proofs against two state roots", ErrArchiveIncorrect)
		}
		ar.StateRoot = root
		ar.Entries = append(ar.Entries, types.StorageEntry{Key: k, Value: v})
	}
	_, a := rent.BuildArchive(ar.Entries)
	ar.Root = a.Root
	return ar, nil
}

// WriteFile stores the archive as canonical CBOR (its content address is
// Keccak-256 of the file) and returns that hash.
func (ar *RentArchive) WriteFile(path string) (types.Hash, error) {
	b := codec.MustMarshal(ar)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return types.Hash{}, err
	}
	return types.Keccak256(b), nil
}

// ReadRentArchive reads an archive file and checks its root.
func ReadRentArchive(path string) (*RentArchive, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ar RentArchive
	if err := codec.Unmarshal(b, &ar); err != nil {
		return nil, fmt.Errorf("archive %s: %w", path, err)
	}
	if _, a := rent.BuildArchive(ar.Entries); a.Root != ar.Root {
		return nil, fmt.Errorf("%w: %s: entries hash to %s, not the recorded %s", ErrArchiveIncorrect, path, a.Root, ar.Root)
	}
	return &ar, nil
}

// RestoreActor restores an evicted actor from ar: it checks ar against the
// root the chain kept, pays the debt from key when payDebt is set, then
// submits the chunks the chain still expects, one transaction each,
// waiting for each receipt. It returns the receipts' transaction hashes.
func (s *AccountRent) Restore(ctx context.Context, ar *RentArchive, payDebt bool, o TxOptions) ([]types.Hash, error) {
	acc, err := s.Account(ctx, ar.Actor)
	if err != nil {
		return nil, err
	}
	if acc == nil || acc.Status != rent.StatusEvicted || acc.Archive == nil {
		return nil, fmt.Errorf("restore %s: the actor is not evicted", ar.Actor)
	}
	if acc.Archive.Root != ar.Root {
		return nil, fmt.Errorf("%w: archive root %s, kept at eviction %s", ErrRestoreMismatch, ar.Root, acc.Archive.Root)
	}
	var hashes []types.Hash
	wait := func(tx *types.Tx) error {
		r, err := s.c.Chain().WaitForReceipt(ctx, tx.Hash())
		if err != nil {
			return err
		}
		hashes = append(hashes, tx.Hash())
		return ReceiptErr(r.Receipt)
	}
	if acc.Debt != nil && acc.Debt.Sign() > 0 {
		if !payDebt {
			return nil, fmt.Errorf("%w: %s base units", ErrRentDebt, acc.Debt)
		}
		tx, err := s.Pay(ctx, ar.Actor, acc.Debt, o)
		if err != nil {
			return nil, err
		}
		if err := wait(tx); err != nil {
			return hashes, fmt.Errorf("pay the rent debt: %w", err)
		}
	}
	chunks := rent.ChunkEntries(ar.Entries)
	if len(chunks) == 0 {
		chunks = [][]types.StorageEntry{nil}
	}
	for i := acc.Archive.Next; i < uint64(len(chunks)); i++ {
		tx, err := s.Send(ctx, &types.RentRestore{Actor: ar.Actor, Index: i, Entries: chunks[i]}, nil, o)
		if err != nil {
			return hashes, err
		}
		if err := wait(tx); err != nil {
			return hashes, fmt.Errorf("restore chunk %d of %d: %w", i+1, len(chunks), err)
		}
	}
	return hashes, nil
}
