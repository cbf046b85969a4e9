package types

// Error is a validation failure with a stable machine-readable code. The HTTP
// API returns Code verbatim, so codes never change once published. Callers
// match with errors.Is against the sentinels below; details are added by
// wrapping: fmt.Errorf("%w: nonce 7, account at 5", ErrNonceTooHigh).
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func newErr(code, msg string) *Error { return &Error{Code: code, Msg: msg} }

// NewError defines a validation failure with a stable code, for packages
// that add their own (the mempool, the API).
func NewError(code, msg string) *Error { return newErr(code, msg) }

// Transaction and block validation failures (spec 002 §2.2).
var (
	ErrMalformedTx         = newErr("malformed_tx", "malformed transaction")
	ErrNonCanonicalTx      = newErr("non_canonical_tx", "transaction is not canonically encoded")
	ErrTxTooLarge          = newErr("tx_too_large", "transaction exceeds max_tx_size")
	ErrWrongChainID        = newErr("wrong_chain_id", "wrong chain id")
	ErrMissingSignature    = newErr("missing_signature", "transaction is not signed")
	ErrBadSignature        = newErr("bad_signature", "invalid signature")
	ErrNonceTooLow         = newErr("nonce_too_low", "nonce already used")
	ErrNonceGap            = newErr("nonce_gap", "nonce is ahead of the account nonce by more than the pending limit")
	ErrLimitsExceeded      = newErr("limits_exceeded", "resource limits exceed protocol maxima")
	ErrIntrinsicCost       = newErr("intrinsic_cost", "limits below the intrinsic cost")
	ErrInsufficientBalance = newErr("insufficient_balance", "balance below value + max fees")
	ErrInvalidAccessList   = newErr("invalid_access_list", "invalid access list")
	ErrBadPayload          = newErr("bad_payload", "payload decoding failed")
	ErrFeeCapBelowTip      = newErr("fee_cap_below_tip", "tip exceeds max fee")
	ErrFeeCapTooLow        = newErr("fee_cap_too_low", "max fee below the current basefee")
	ErrReservedAddress     = newErr("reserved_address", "address is in the reserved system range")
	ErrUnsupported         = newErr("unsupported_instruction", "instruction not supported by this node")
)
