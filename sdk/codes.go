package sdk

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/system"
)

// Sentinel errors for receipt failure codes. A failed receipt converts to
// a *ReceiptError (ReceiptErr), which matches its code's sentinel with
// errors.Is — test errors.Is(err, sdk.ErrVersionConflict) rather than the
// receipt's text, which is not stable.
var (
	ErrInsufficientBalance = errors.New("insufficient balance")
	ErrOutOfCycles         = errors.New("out of cycles")
	ErrOutOfCells          = errors.New("out of cells")
	ErrActorError          = errors.New("actor code raised")
	ErrNoActor             = errors.New("no actor at the address")
	ErrUnauthorized        = errors.New("unauthorized")
	ErrInsufficientStake   = errors.New("insufficient stake")
	ErrVersionConflict     = errors.New("version conflict")
	ErrNoSuchVolume        = errors.New("no such volume")
	ErrNotVolumeOwner      = errors.New("not the volume's owner")
	ErrNotARelay           = errors.New("not an active relay")
	ErrNotARunner          = errors.New("not an active runner")
	ErrRunnerBusy          = errors.New("runner busy")
	ErrNoSuchJob           = errors.New("no such job")
	ErrInvalidJobSpec      = errors.New("invalid job spec")
	ErrJobTransition       = errors.New("job not in a state that allows this")
	ErrNotInCommittee      = errors.New("not on the job's committee")
	ErrAttestationRefused  = errors.New("attestation refused")
	ErrNoSuchSecret        = errors.New("no such secret")
	ErrNoSuchModel         = errors.New("no such model")
	ErrModelBanned         = errors.New("model banned")
	ErrNoSuchProposal      = errors.New("no such proposal")
	ErrVotingClosed        = errors.New("voting closed")
	ErrNoVotingPower       = errors.New("no voting power in the proposal's snapshot")
	ErrDepositTooLow       = errors.New("proposal deposit below the minimum")
	ErrBeforeETA           = errors.New("proposal executed before its ETA")
	ErrActorPaused         = errors.New("system actor circuit-broken by the Security Council")
	ErrNoSuchToken         = errors.New("no such token")
	ErrTokenBalance        = errors.New("token amount beyond the holder's balance")
	ErrTokenAllowance      = errors.New("token amount beyond the spender's allowance")
	ErrSupplyCapExceeded   = errors.New("token mint above the supply cap")
	ErrNotMinter           = errors.New("not the token's minter")
	ErrNotBurner           = errors.New("not the token's burner")
)

// sentinel is the sentinel error of a receipt code, nil for codes without one.
func sentinel(c system.Code) error {
	switch c {
	case system.CodeInsufficientBalance:
		return ErrInsufficientBalance
	case system.CodeOutOfCycles:
		return ErrOutOfCycles
	case system.CodeOutOfCells:
		return ErrOutOfCells
	case system.CodeActorError:
		return ErrActorError
	case system.CodeNoActor:
		return ErrNoActor
	case system.CodeUnauthorized:
		return ErrUnauthorized
	case system.CodeInsufficientStake:
		return ErrInsufficientStake
	case system.CodeVersionConflict:
		return ErrVersionConflict
	case system.CodeNoSuchVolume:
		return ErrNoSuchVolume
	case system.CodeNotVolumeOwner:
		return ErrNotVolumeOwner
	case system.CodeNotARelay:
		return ErrNotARelay
	case system.CodeNotARunner:
		return ErrNotARunner
	case system.CodeRunnerBusy:
		return ErrRunnerBusy
	case system.CodeNoSuchJob:
		return ErrNoSuchJob
	case system.CodeInvalidJobSpec:
		return ErrInvalidJobSpec
	case system.CodeJobTransition:
		return ErrJobTransition
	case system.CodeNotInCommittee:
		return ErrNotInCommittee
	case system.CodeNotAttested:
		return ErrNotAttested
	case system.CodeAttestationRefused:
		return ErrAttestationRefused
	case system.CodeNoSuchSecret:
		return ErrNoSuchSecret
	case system.CodeNoSuchModel:
		return ErrNoSuchModel
	case system.CodeModelBanned:
		return ErrModelBanned
	case system.CodeNoSuchProposal:
		return ErrNoSuchProposal
	case system.CodeVotingClosed:
		return ErrVotingClosed
	case system.CodeNoVotingPower:
		return ErrNoVotingPower
	case system.CodeDepositTooLow:
		return ErrDepositTooLow
	case system.CodeBeforeETA:
		return ErrBeforeETA
	case system.CodeActorPaused:
		return ErrActorPaused
	case system.CodeNoSuchToken:
		return ErrNoSuchToken
	case system.CodeTokenBalance:
		return ErrTokenBalance
	case system.CodeTokenAllowance:
		return ErrTokenAllowance
	case system.CodeSupplyCapExceeded:
		return ErrSupplyCapExceeded
	case system.CodeNotMinter:
		return ErrNotMinter
	case system.CodeNotBurner:
		return ErrNotBurner
	}
	return rentSentinel(c)
}

// ReceiptError is a failed transaction's receipt: its stable code and the
// node's text for it.
type ReceiptError struct {
	Code    system.Code
	Message string
}

func (e *ReceiptError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("transaction failed: %s", e.Code)
	}
	return e.Message
}

// Is reports whether target is the sentinel of e's code.
func (e *ReceiptError) Is(target error) bool {
	s := sentinel(e.Code)
	return s != nil && s == target
}

// ReceiptErr is nil for a successful receipt and a *ReceiptError for a
// failed one.
func ReceiptErr(r *apitypes.Receipt) error {
	if r.Status == "success" {
		return nil
	}
	c := system.Code(r.Code)
	if c == system.CodeOK {
		c = system.CodeFailed // a node from before receipt codes
	}
	return &ReceiptError{Code: c, Message: r.Error}
}
