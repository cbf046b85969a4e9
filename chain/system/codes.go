package system

import (
	"fmt"
	"slices"
)

// Code is the stable numeric code of a failed transaction or message. It
// is what receipts and message records commit to (the receipts root); the
// human-readable text next to it is not consensus data and may change
// between releases. Codes are never renumbered: a retired code stays
// reserved, and new codes take the next free number of their owner's range.
type Code uint32

// Codes that belong to no single system actor.
const (
	CodeOK           Code = 0 // success
	CodeFailed       Code = 1 // a failure without a more specific code
	CodeActorError   Code = 2 // actor code raised (the text carries its exception)
	CodeReverted     Code = 3 // the message succeeded, but its transaction, timer or callback failed
	CodeNotDelivered Code = 4 // not delivered: the sending handler failed
	CodePending      Code = 5 // queued, not yet delivered (never in a committed receipt)
)

// Codes of the actors and libraries (chain/execution).
const (
	CodeUnresolvedImport    Code = 101
	CodeOutOfCycles         Code = 102
	CodeOutOfCells          Code = 103
	CodeTooManyLibraries    Code = 104
	CodeValidationError     Code = 105
	CodeActorExists         Code = 106
	CodeNoActor             Code = 107
	CodeActorBlockCycles    Code = 108
	CodeDuplicateMessage    Code = 109
	CodeInvalidLibraryName  Code = 110
	CodeNoSuchLibrary       Code = 111
	CodeInvalidManifest     Code = 112
	CodeInsufficientBalance Code = 113
	CodeInvalidLibrary      Code = 114
	CodeInvalidSource       Code = 115
	CodeValueNotAccepted    Code = 116
	CodeUnsupported         Code = 117
)

// Codes of the Relay Registry and Storage Manager (chain/system/storage).
const (
	CodeInvalidRelayKey   Code = 201
	CodeInvalidRelayAddr  Code = 202
	CodeInsufficientStake Code = 203
	CodeNotARelay         Code = 204
	CodeNotVolumeOwner    Code = 205
	CodeInvalidErasure    Code = 206
	CodeVolumeExists      Code = 207
	CodeNoSuchVolume      Code = 208
	CodeVersionConflict   Code = 209
	CodeVolumeEvicted     Code = 210
	CodeInvalidPlacement  Code = 211
	CodeNoValue           Code = 212
	CodeNoSuchChallenge   Code = 213
	CodeChallengeClosed   Code = 214
	CodeEpochNotOver      Code = 215
	CodeInvalidClaim      Code = 216
	CodeNothingToClaim    Code = 217
	CodeNoSuchPlacement   Code = 218
	// repair_placement (kind 17)
	CodeNotRepairer     Code = 219 // the sender holds no part of the volume, or is not healthy
	CodeSourceHealthy   Code = 220 // From is healthy: its shards are not moved
	CodeBadRepairTarget Code = 221 // To is not a healthy active relay other than From
	CodeShardNotHeld    Code = 222 // the leaf is not From's at the volume's placement version
	CodeInvalidRepair   Code = 223 // a malformed repair (proof too deep, zero size)
)

// Codes of the Runner Registry, Job Dispatcher, Result Verifier and callback lane (chain/execution offchain*.go).
const (
	CodeInvalidResultKey     Code = 401
	CodeInvalidCapabilities  Code = 402
	CodeInvalidRateCard      Code = 403
	CodeInvalidEndpoint      Code = 404
	CodeInsufficientSelfBond Code = 405
	CodeNotARunner           Code = 406
	CodeRunnerBusy           Code = 407
	CodeInvalidJobSpec       Code = 408
	CodeJobExists            Code = 409
	CodeJobTransition        Code = 410
	CodeNoSuchJob            Code = 411
	CodeNotAggregator        Code = 412
	CodeInvalidSubmission    Code = 413
	CodeInvalidReveal        Code = 414
	CodeTooManyTranches      Code = 415
	CodeInvalidAmount        Code = 416
	CodeInvalidDelegation    Code = 417
	CodeTooManyDelegators    Code = 418
	CodeNoDelegation         Code = 419
	CodeInvalidCommission    Code = 420
	CodeNothingToWithdraw    Code = 421
	CodeChallengeBond        Code = 422
	CodeNotChallengeable     Code = 423
	CodeAlreadySlashed       Code = 424
	CodeInvalidEvidence      Code = 425
)

// Codes of the Entitlements (chain/execution/offchain_entitlement.go).
const (
	CodeUnauthorized       Code = 601
	CodeEntitlement        Code = 602
	CodeInvalidEntitlement Code = 603
)

// Codes of the Validator Registry (chain/system/validators).
const (
	CodeNoValidatorRegistry      Code = 701
	CodeInvalidBLSKey            Code = 702
	CodeInvalidProofOfPossession Code = 703
	CodeBLSKeyInUse              Code = 704
	CodeValidatorExiting         Code = 705
	CodeBLSKeyMismatch           Code = 706
	CodeNotAValidator            Code = 707
	CodeNotExiting               Code = 708
	CodeStillBonded              Code = 709
	CodeNotJailed                Code = 710
	CodeStillJailed              Code = 711
	CodeEvidenceKnown            Code = 712
)

// Codes of the TEE Verifier (chain/execution/tee.go).
const (
	CodeInvalidSealKey     Code = 801
	CodeNoTEESupport       Code = 802
	CodeNoTEEPolicy        Code = 803
	CodeAttestationRefused Code = 804
	CodeNotAttested        Code = 805
	CodeNotInCommittee     Code = 806
)

// Codes of the Secrets Manager (chain/execution/secrets.go).
const (
	CodeInvalidSecretName Code = 901
	CodeInvalidPolicy     Code = 902
	CodeInvalidCiphertext Code = 903
	CodeInvalidOwnerKey   Code = 904
	CodeTooManySecrets    Code = 905
	CodeNoSuchSecret      Code = 906
	CodePolicyMismatch    Code = 907
	CodeStaleSealKey      Code = 908
	CodeInvalidSealedKey  Code = 909
	CodeTooManyGrants     Code = 910
	CodeNoSuchGrant       Code = 911
)

// Codes of the Model Registry (chain/system/models).
const (
	CodeInvalidModel   Code = 1101 // a malformed publish (name, uri) or model id
	CodeModelExists    Code = 1102 // the model id is already registered
	CodeNoSuchModel    Code = 1103 // no model with this id is registered
	CodeModelBanned    Code = 1104 // governance banned the model
	CodeModelRetired   Code = 1105 // the publisher retired the model
	CodeModelDeposit   Code = 1106 // the value is not the publish deposit
	CodeNotModelOwner  Code = 1107 // only the publisher may retire or withdraw
	CodeNotGovernance  Code = 1108 // only governance (0x…09) may ban or unban
	CodeNotRetired     Code = 1109 // withdraw before retire
	CodeStillUnbonding Code = 1110 // withdraw before the retire delay passed
	CodeModelNotServed Code = 1111 // a runner does not declare the job's model
	CodeWrongModel     Code = 1112 // TEE evidence binds another model than the job names
)

// Codes of the CIP-20 token module (chain/system/tokens).
const (
	CodeInvalidToken      Code = 1201 // a malformed create (name, symbol, decimals, cap) or amount
	CodeNoSuchToken       Code = 1202 // no token with this id exists
	CodeTokenBalance      Code = 1203 // the amount exceeds the holder's token balance
	CodeTokenAllowance    Code = 1204 // the amount exceeds the spender's allowance
	CodeSupplyCapExceeded Code = 1205 // the mint would take the supply above the cap
	CodeNotMinter         Code = 1206 // the sender is neither the admin nor a TokenMint entitlement holder
	CodeNotBurner         Code = 1207 // the sender is neither the admin nor a TokenBurn entitlement holder
)

// Codes of the state rent and storage bond module (chain/system/rent).
const (
	CodeRentNoActor     Code = 1308 // the target address holds no actor
	CodeRentNoValue     Code = 1309 // rent_pay without value, or a sponsorship of zero epochs
	CodeSponsorBalance  Code = 1310 // the sponsor's balance does not cover the sponsorship
	CodeNotActorOwner   Code = 1311 // only the actor's owner (its deployer) may bond its storage
	CodeBadQuota        Code = 1312 // the quota is outside base..max, or below the actor's storage in use
	CodeActorDormant    Code = 1313 // the actor was evicted for unpaid rent: restore it first
	CodeNotDormant      Code = 1314 // a restore for an actor that is not evicted
	CodeRentDebt        Code = 1315 // a restore before the rent debt is paid
	CodeRestoreOrder    Code = 1316 // a restore chunk out of order, or a malformed chunk
	CodeRestoreMismatch Code = 1317 // the presented chunk does not match the archive root kept at eviction
	CodeRentBondBalance Code = 1318 // the owner's balance does not cover the storage bond
	CodeRentNoRentDue   Code = 1319 // a sponsorship for an actor that pays no rent
	CodeRentOff         Code = 1320 // the chain runs without state rent (no "rent" in genesis)
)

// Codes of blobs (chain/blob, chain/actors/blobops; spec 002 §7).
const (
	CodeBlobMalformed Code = 1341 // not a multihash, or an unsupported hash function (0x12 sha2-256 and 0x1e blake3 are)
	CodeBlobBadRef    Code = 1342 // a blob reference with a zero size, a bad volume id or an over-long path
	CodeBlobMismatch  Code = 1343 // fetched content does not hash to its multihash (readers: a tampered blob)
	CodeBlobTooLarge  Code = 1344 // an inline output above 64 KiB: store it as a blob
)

// Codes of governance's second round (issue #17 items 2, 4, 5, 6).
const (
	CodeHeartbeatTooSoon    Code = 1351 // Runner Registry v2: a second heartbeat by a runner in one block
	CodeFastTrackThresholds Code = 1352 // a Council fast-track of an upgrade whose vote is below the fast-track thresholds
)

// Codes of the Ethereum bridge hooks module (chain/system/ethbridge).
const (
	CodeNotBridgeMember    Code = 1326 // the sender is not in the authorised bridge set
	CodeBridgeNotEntitled  Code = 1327 // the actor's manifest does not declare this Ethereum contract and event
	CodeSubscriptionUnpaid Code = 1328 // a subscribe without value, or a subscription whose balance no longer covers an event
	CodeNoSubscription     Code = 1329 // the actor has no subscription to this contract and event
	CodeEventDelivered     Code = 1330 // the event (chain, tx hash, log index) was already delivered to this actor
	CodeAlreadyAttested    Code = 1331 // this bridge member already attested this event
	CodeBadBridgeEvent     Code = 1332 // a malformed event: no topics or more than 4, data too large, a bad handler or actor
	CodeWrappedExists      Code = 1333 // the asset already has a wrapped token
	CodeNoWrappedToken     Code = 1334 // no wrapped token for this asset or id
	CodeBridgeOff          Code = 1335 // the chain has no bridge set (no "bridge" in genesis)
)

// Codes of job volumes (runner/volumes, issue #19 item 2): why a runner
// refused a job's CBFS volume before reading or writing anything.
const (
	CodeVolumeTokenMalformed  Code = 1301 // the token does not decode or its signature chain does not verify
	CodeVolumeTokenWrongVol   Code = 1302 // the token is for another volume than the spec names
	CodeVolumeTokenNotHolder  Code = 1303 // the token is not granted to the runner's key
	CodeVolumeTokenNotGranted Code = 1304 // the token does not grant what the access needs (read-only input, write on the output path)
	CodeVolumeOutsidePrefix   Code = 1305 // an output file lies outside the spec's output path
	CodeVolumeMissing         Code = 1306 // the volume or the input path does not exist
	CodeVolumeInputTooLarge   Code = 1307 // the inputs exceed the job's memory bound
)

// Codes of Governance, the parameter store and the Treasury (chain/system/governance, params, treasury).
const (
	CodeNoSuchProposal       Code = 1001
	CodeInvalidProposal      Code = 1002
	CodeUnknownParam         Code = 1003
	CodeParamOutOfRange      Code = 1004
	CodeDepositTooLow        Code = 1005
	CodeVotingClosed         Code = 1006
	CodeNoVotingPower        Code = 1007
	CodeInvalidVote          Code = 1008
	CodeNotQueued            Code = 1009
	CodeBeforeETA            Code = 1010
	CodeTreasuryInsufficient Code = 1011
	CodeTierTooLow           Code = 1012
	CodeCouncilSignatures    Code = 1013
	CodeCouncilPower         Code = 1014
	CodeActorPaused          Code = 1015
	CodeNotPaused            Code = 1016
	CodeUnknownVersion       Code = 1017
	CodeNoRollback           Code = 1018
)

var codeNames = map[Code]string{
	CodeOK:                       "OK",
	CodeFailed:                   "Failed",
	CodeActorError:               "ActorError",
	CodeReverted:                 "Reverted",
	CodeNotDelivered:             "NotDelivered",
	CodePending:                  "Pending",
	CodeUnresolvedImport:         "UnresolvedImport",
	CodeOutOfCycles:              "OutOfCycles",
	CodeOutOfCells:               "OutOfCells",
	CodeTooManyLibraries:         "TooManyLibraries",
	CodeValidationError:          "ValidationError",
	CodeActorExists:              "ActorExists",
	CodeNoActor:                  "NoActor",
	CodeActorBlockCycles:         "ActorBlockCycles",
	CodeDuplicateMessage:         "DuplicateMessage",
	CodeInvalidLibraryName:       "InvalidLibraryName",
	CodeNoSuchLibrary:            "NoSuchLibrary",
	CodeInvalidManifest:          "InvalidManifest",
	CodeInsufficientBalance:      "InsufficientBalance",
	CodeInvalidLibrary:           "InvalidLibrary",
	CodeInvalidRelayKey:          "InvalidRelayKey",
	CodeInvalidRelayAddr:         "InvalidRelayAddr",
	CodeInsufficientStake:        "InsufficientStake",
	CodeNotARelay:                "NotARelay",
	CodeNotVolumeOwner:           "NotVolumeOwner",
	CodeInvalidErasure:           "InvalidErasure",
	CodeVolumeExists:             "VolumeExists",
	CodeNoSuchVolume:             "NoSuchVolume",
	CodeVersionConflict:          "VersionConflict",
	CodeVolumeEvicted:            "VolumeEvicted",
	CodeInvalidPlacement:         "InvalidPlacement",
	CodeNoValue:                  "NoValue",
	CodeNoSuchChallenge:          "NoSuchChallenge",
	CodeChallengeClosed:          "ChallengeClosed",
	CodeEpochNotOver:             "EpochNotOver",
	CodeInvalidClaim:             "InvalidClaim",
	CodeNothingToClaim:           "NothingToClaim",
	CodeNoSuchPlacement:          "NoSuchPlacement",
	CodeNotRepairer:              "NotRepairer",
	CodeSourceHealthy:            "SourceHealthy",
	CodeBadRepairTarget:          "BadRepairTarget",
	CodeShardNotHeld:             "ShardNotHeld",
	CodeInvalidRepair:            "InvalidRepair",
	CodeInvalidResultKey:         "InvalidResultKey",
	CodeInvalidCapabilities:      "InvalidCapabilities",
	CodeInvalidRateCard:          "InvalidRateCard",
	CodeInvalidEndpoint:          "InvalidEndpoint",
	CodeInsufficientSelfBond:     "InsufficientSelfBond",
	CodeNotARunner:               "NotARunner",
	CodeRunnerBusy:               "RunnerBusy",
	CodeInvalidJobSpec:           "InvalidJobSpec",
	CodeJobExists:                "JobExists",
	CodeJobTransition:            "JobTransition",
	CodeNoSuchJob:                "NoSuchJob",
	CodeNotAggregator:            "NotAggregator",
	CodeInvalidSubmission:        "InvalidSubmission",
	CodeInvalidReveal:            "InvalidReveal",
	CodeTooManyTranches:          "TooManyTranches",
	CodeInvalidAmount:            "InvalidAmount",
	CodeInvalidDelegation:        "InvalidDelegation",
	CodeTooManyDelegators:        "TooManyDelegators",
	CodeNoDelegation:             "NoDelegation",
	CodeInvalidCommission:        "InvalidCommission",
	CodeNothingToWithdraw:        "NothingToWithdraw",
	CodeChallengeBond:            "ChallengeBond",
	CodeNotChallengeable:         "NotChallengeable",
	CodeAlreadySlashed:           "AlreadySlashed",
	CodeInvalidEvidence:          "InvalidEvidence",
	CodeUnauthorized:             "Unauthorized",
	CodeEntitlement:              "Entitlement",
	CodeInvalidEntitlement:       "InvalidEntitlement",
	CodeNoValidatorRegistry:      "NoValidatorRegistry",
	CodeInvalidBLSKey:            "InvalidBLSKey",
	CodeInvalidProofOfPossession: "InvalidProofOfPossession",
	CodeBLSKeyInUse:              "BLSKeyInUse",
	CodeValidatorExiting:         "ValidatorExiting",
	CodeBLSKeyMismatch:           "BLSKeyMismatch",
	CodeNotAValidator:            "NotAValidator",
	CodeNotExiting:               "NotExiting",
	CodeStillBonded:              "StillBonded",
	CodeNotJailed:                "NotJailed",
	CodeStillJailed:              "StillJailed",
	CodeEvidenceKnown:            "EvidenceKnown",
	CodeInvalidSealKey:           "InvalidSealKey",
	CodeNoTEESupport:             "NoTEESupport",
	CodeNoTEEPolicy:              "NoTEEPolicy",
	CodeAttestationRefused:       "AttestationRefused",
	CodeNotAttested:              "NotAttested",
	CodeNotInCommittee:           "NotInCommittee",
	CodeInvalidSecretName:        "InvalidSecretName",
	CodeInvalidPolicy:            "InvalidPolicy",
	CodeInvalidCiphertext:        "InvalidCiphertext",
	CodeInvalidOwnerKey:          "InvalidOwnerKey",
	CodeTooManySecrets:           "TooManySecrets",
	CodeNoSuchSecret:             "NoSuchSecret",
	CodePolicyMismatch:           "PolicyMismatch",
	CodeStaleSealKey:             "StaleSealKey",
	CodeInvalidSealedKey:         "InvalidSealedKey",
	CodeTooManyGrants:            "TooManyGrants",
	CodeNoSuchGrant:              "NoSuchGrant",
	CodeInvalidModel:             "InvalidModel",
	CodeModelExists:              "ModelExists",
	CodeNoSuchModel:              "NoSuchModel",
	CodeModelBanned:              "ModelBanned",
	CodeModelRetired:             "ModelRetired",
	CodeModelDeposit:             "ModelDeposit",
	CodeNotModelOwner:            "NotModelOwner",
	CodeNotGovernance:            "NotGovernance",
	CodeNotRetired:               "NotRetired",
	CodeStillUnbonding:           "StillUnbonding",
	CodeModelNotServed:           "ModelNotServed",
	CodeWrongModel:               "WrongModel",
	CodeInvalidToken:             "InvalidToken",
	CodeNoSuchToken:              "NoSuchToken",
	CodeTokenBalance:             "TokenBalance",
	CodeTokenAllowance:           "TokenAllowance",
	CodeSupplyCapExceeded:        "SupplyCapExceeded",
	CodeNotMinter:                "NotMinter",
	CodeNotBurner:                "NotBurner",
	CodeRentNoActor:              "RentNoActor",
	CodeRentNoValue:              "RentNoValue",
	CodeSponsorBalance:           "SponsorBalance",
	CodeNotActorOwner:            "NotActorOwner",
	CodeBadQuota:                 "BadQuota",
	CodeActorDormant:             "ActorDormant",
	CodeNotDormant:               "NotDormant",
	CodeRentDebt:                 "RentDebt",
	CodeRestoreOrder:             "RestoreOrder",
	CodeRestoreMismatch:          "RestoreMismatch",
	CodeRentBondBalance:          "RentBondBalance",
	CodeRentNoRentDue:            "RentNoRentDue",
	CodeRentOff:                  "RentOff",
	CodeBlobMalformed:            "BlobMalformed",
	CodeBlobBadRef:               "BlobBadRef",
	CodeBlobMismatch:             "BlobMismatch",
	CodeBlobTooLarge:             "BlobTooLarge",
	CodeHeartbeatTooSoon:         "HeartbeatTooSoon",
	CodeFastTrackThresholds:      "FastTrackThresholds",
	CodeNotBridgeMember:          "NotBridgeMember",
	CodeBridgeNotEntitled:        "BridgeNotEntitled",
	CodeSubscriptionUnpaid:       "SubscriptionUnpaid",
	CodeNoSubscription:           "NoSubscription",
	CodeEventDelivered:           "EventDelivered",
	CodeAlreadyAttested:          "AlreadyAttested",
	CodeBadBridgeEvent:           "BadBridgeEvent",
	CodeWrappedExists:            "WrappedExists",
	CodeNoWrappedToken:           "NoWrappedToken",
	CodeBridgeOff:                "BridgeOff",
	CodeVolumeTokenMalformed:     "VolumeTokenMalformed",
	CodeVolumeTokenWrongVol:      "VolumeTokenWrongVolume",
	CodeVolumeTokenNotHolder:     "VolumeTokenNotHolder",
	CodeVolumeTokenNotGranted:    "VolumeTokenNotGranted",
	CodeVolumeOutsidePrefix:      "VolumeOutsidePrefix",
	CodeVolumeMissing:            "VolumeMissing",
	CodeVolumeInputTooLarge:      "VolumeInputTooLarge",
	CodeNoSuchProposal:           "NoSuchProposal",
	CodeInvalidProposal:          "InvalidProposal",
	CodeUnknownParam:             "UnknownParam",
	CodeParamOutOfRange:          "ParamOutOfRange",
	CodeDepositTooLow:            "DepositTooLow",
	CodeVotingClosed:             "VotingClosed",
	CodeNoVotingPower:            "NoVotingPower",
	CodeInvalidVote:              "InvalidVote",
	CodeNotQueued:                "NotQueued",
	CodeBeforeETA:                "BeforeETA",
	CodeTreasuryInsufficient:     "TreasuryInsufficient",
	CodeTierTooLow:               "TierTooLow",
	CodeCouncilSignatures:        "CouncilSignatures",
	CodeCouncilPower:             "CouncilPower",
	CodeActorPaused:              "ActorPaused",
	CodeNotPaused:                "NotPaused",
	CodeUnknownVersion:           "UnknownVersion",
	CodeNoRollback:               "NoRollback",
}

// String is the code's name, e.g. "VersionConflict".
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("Code(%d)", uint32(c))
}

// Codes returns every defined code, for clients that map them to errors.
func Codes() []Code {
	out := make([]Code, 0, len(codeNames))
	for c := range codeNames {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}
