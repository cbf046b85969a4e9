package types

// Validator Registry (0x…0C) instructions, kinds 70–79 (docs/CONSENSUS.md
// §10). `to` is the registry; only validator_register carries value (the
// stake it adds).
const (
	KindValidatorRegister InstructionKind = 70 // register the sender as a validator (or add stake); value is the stake
	KindValidatorExit     InstructionKind = 71 // leave the set at the next epoch boundary; the stake unbonds
	KindValidatorWithdraw InstructionKind = 72 // take the stake back once the unbonding period is over
	KindValidatorEvidence InstructionKind = 73 // equivocation evidence against a validator: slash and jail
	KindValidatorUnjail   InstructionKind = 74 // a jailed validator asks to rejoin after its jail period
)

// ValidatorRegistryAddress is the system actor holding validator stakes.
var ValidatorRegistryAddress = SystemAddress(0x0C)

// ValidatorRegister registers the sender's account as a validator with a
// BLS12-381 consensus key (48-byte compressed G1) and its proof of
// possession (96-byte signature under the PoP ciphersuite). Sent again by a
// registered validator it adds the value to the stake (the key must match).
type ValidatorRegister struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	BLSKey Bytes
	BLSPoP Bytes
}

// ValidatorExit signals unbonding.
type ValidatorExit struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
}

// ValidatorWithdraw returns an exited validator's stake.
type ValidatorWithdraw struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
}

// ValidatorEvidence carries a canonical consensus.Evidence (two conflicting
// signed headers of one validator in one round) from epoch Epoch, whose
// signing domain (consensus.EpochDomain) the evidence's chain ID must be.
type ValidatorEvidence struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Evidence Bytes
	Epoch    uint64
}

// ValidatorUnjail asks to end the sender's jailing.
type ValidatorUnjail struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
}

func (ValidatorRegister) InstructionKind() InstructionKind { return KindValidatorRegister }
func (ValidatorExit) InstructionKind() InstructionKind     { return KindValidatorExit }
func (ValidatorWithdraw) InstructionKind() InstructionKind { return KindValidatorWithdraw }
func (ValidatorEvidence) InstructionKind() InstructionKind { return KindValidatorEvidence }
func (ValidatorUnjail) InstructionKind() InstructionKind   { return KindValidatorUnjail }

// validatorKinds registers the kinds declared in this file (kinds.go):
// validator-set changes run in the system lane.
var validatorKinds = []kindSpec{
	{KindValidatorRegister, "validator_register", LaneSystem, newOf[ValidatorRegister]},
	{KindValidatorExit, "validator_exit", LaneSystem, newOf[ValidatorExit]},
	{KindValidatorWithdraw, "validator_withdraw", LaneSystem, newOf[ValidatorWithdraw]},
	{KindValidatorEvidence, "validator_evidence", LaneSystem, newOf[ValidatorEvidence]},
	{KindValidatorUnjail, "validator_unjail", LaneSystem, newOf[ValidatorUnjail]},
}
