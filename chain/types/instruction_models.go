package types

// Model Registry (0x…0D, spec 002 §5.1) instructions. `to` is the
// registry; only model_publish carries value (the deposit).
const (
	KindModelPublish  InstructionKind = 54 // publish a model revision; value is the deposit
	KindModelRetire   InstructionKind = 55 // the publisher retires its model; the deposit unbonds
	KindModelWithdraw InstructionKind = 56 // the publisher takes back a retired model's deposit after the delay
	KindModelBan      InstructionKind = 57 // governance (0x…09) bans a model
	KindModelUnban    InstructionKind = 58 // governance lifts a ban
	// KindReportWrongModel goes to the Result Verifier (0x…03): it points
	// at recorded TEE evidence binding another model than the job names.
	KindReportWrongModel InstructionKind = 59
)

// modelKinds registers the kinds declared in this file (kinds.go).
var modelKinds = []kindSpec{
	{KindModelPublish, "model_publish", LaneUser, newOf[ModelPublish]},
	{KindModelRetire, "model_retire", LaneUser, newOf[ModelRetire]},
	{KindModelWithdraw, "model_withdraw", LaneUser, newOf[ModelWithdraw]},
	{KindModelBan, "model_ban", LaneSystem, newOf[ModelBan]},
	{KindModelUnban, "model_unban", LaneSystem, newOf[ModelUnban]},
	{KindReportWrongModel, "report_wrong_model", LaneUser, newOf[ReportWrongModel]},
}

// ModelPublish publishes a model revision. The publisher supplies the
// Keccak-256 hashes of the four components; the registry derives
// model_id = keccak256(Weights ‖ Arch ‖ Tokenizer ‖ License).
type ModelPublish struct {
	_         struct{} `cbor:",toarray"`
	Kind      InstructionKind
	Weights   Hash
	Arch      Hash
	Tokenizer Hash
	License   Hash
	Name      string // human-readable label, 1..64 bytes; not part of the id
	URI       string // where the weights can be fetched; 0..256 bytes
}

// ModelRetire retires the sender's model ID: jobs can no longer name it
// and the deposit is released after the retire delay.
type ModelRetire struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
	ID   Hash
}

// ModelWithdraw pays the deposit of the sender's retired model ID back
// once the retire delay has passed and the model is not banned.
type ModelWithdraw struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
	ID   Hash
}

// ModelBan bans model ID. Only governance (0x…09) may send it.
type ModelBan struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	ID     Hash
	Reason string
}

// ModelUnban lifts the ban on model ID. Only governance (0x…09) may send it.
type ModelUnban struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
	ID   Hash
}

// ReportWrongModel reports that Runner's per-job TEE evidence for JobID,
// recorded by the TEE Verifier, binds another model than the job's
// model_id: the Result Verifier checks the record and slashes the runner;
// the reporter gets the challenger's share. Sent to the Result Verifier
// without value; anyone may send it.
type ReportWrongModel struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	JobID  Hash
	Runner Address
}

func (ReportWrongModel) InstructionKind() InstructionKind { return KindReportWrongModel }
func (ModelPublish) InstructionKind() InstructionKind     { return KindModelPublish }
func (ModelRetire) InstructionKind() InstructionKind      { return KindModelRetire }
func (ModelWithdraw) InstructionKind() InstructionKind    { return KindModelWithdraw }
func (ModelBan) InstructionKind() InstructionKind         { return KindModelBan }
func (ModelUnban) InstructionKind() InstructionKind       { return KindModelUnban }
