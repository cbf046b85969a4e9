package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func addr(b byte) types.Address {
	var a types.Address
	a[0] = b
	a[19] = b
	return a
}

func validSpec() JobSpec {
	return JobSpec{
		JobType: JobTypeHTTP,
		Bounds:  ResourceBounds{MaxTokens: 0, MaxWallTimeMs: 30_000, MaxMemoryBytes: 256 << 20},
		Verification: VerificationConfig{
			Mode: ModeStructuredMatch, Runners: 3,
			Checks: []Check{
				{Kind: CheckJSONSchema, Schema: []byte(`{"type":"object"}`)},
				{Kind: CheckNumericTolerance, Field: "/price", Tolerance: "0.01"},
				{Kind: CheckNumericRange, Field: "/price", Min: "0", Max: "1000000"},
			},
		},
		MaxPrice:        big.NewInt(1_000_000),
		Tip:             big.NewInt(10),
		TimeoutBlocks:   20,
		Callback:        CallbackInfo{Actor: addr(9), Handler: "on_price"},
		Submitter:       addr(9),
		SubmittedAt:     100,
		ResultSchema:    ResultSchema{MaxReturnBytes: 1024, ExpectedExecutionMs: 2000, DataFormat: FormatJSON},
		RequiredDomains: []string{"api.coinbase.com", "set:price_feeds"},
		Input:           []byte(`{"url":"https://api.coinbase.com/v2/prices/BTC-USD/spot"}`),
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*JobSpec)
		want string // substring of the error; "" = valid
	}{
		{"valid", func(*JobSpec) {}, ""},
		{"bad job type", func(s *JobSpec) { s.JobType = 0 }, "job_type"},
		{"zero wall time", func(s *JobSpec) { s.Bounds.MaxWallTimeMs = 0 }, "max_wall_time_ms"},
		{"zero memory", func(s *JobSpec) { s.Bounds.MaxMemoryBytes = 0 }, "max_memory_bytes"},
		{"llm without tokens", func(s *JobSpec) { s.JobType = JobTypeLLM; s.RequiredDomains = nil }, "max_tokens"},
		{"nil max price", func(s *JobSpec) { s.MaxPrice = nil }, "max_price must be > 0"},
		{"zero max price", func(s *JobSpec) { s.MaxPrice = new(big.Int) }, "max_price must be > 0"},
		{"huge max price", func(s *JobSpec) { s.MaxPrice = new(big.Int).Lsh(big.NewInt(1), 256) }, "2^256-1"},
		{"escrow overflow", func(s *JobSpec) { s.MaxPrice = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)) }, "max_price + tip"},
		{"nil tip", func(s *JobSpec) { s.Tip = nil }, "tip"},
		{"negative tip", func(s *JobSpec) { s.Tip = big.NewInt(-1) }, "tip"},
		{"zero timeout", func(s *JobSpec) { s.TimeoutBlocks = 0 }, "timeout_blocks"},
		{"no handler", func(s *JobSpec) { s.Callback.Handler = "" }, "handler"},
		{"no callback actor", func(s *JobSpec) { s.Callback.Actor = types.Address{} }, "callback.actor"},
		{"no submitter", func(s *JobSpec) { s.Submitter = types.Address{} }, "submitter"},
		{"empty pool id", func(s *JobSpec) { s.RequiredRunnerPool = []byte{} }, "required_runner_pool"},
		{"zero max return", func(s *JobSpec) { s.ResultSchema.MaxReturnBytes = 0 }, "max_return_bytes"},
		{"max return over 64KiB", func(s *JobSpec) { s.ResultSchema.MaxReturnBytes = 64*1024 + 1 }, "max_return_bytes"},
		{"zero expected ms", func(s *JobSpec) { s.ResultSchema.ExpectedExecutionMs = 0 }, "expected_execution_ms"},
		{"expected beyond bounds", func(s *JobSpec) { s.ResultSchema.ExpectedExecutionMs = 40_000 }, "exceeds bounds"},
		{"bad data format", func(s *JobSpec) { s.ResultSchema.DataFormat = 9 }, "data_format"},
		{"schema on binary", func(s *JobSpec) {
			s.Verification = VerificationConfig{Mode: ModeNone, Runners: 1}
			s.ResultSchema.DataFormat = FormatBinary
			s.ResultSchema.JSONSchema = []byte("{}")
		}, "only allowed with the json"},
		{"unsorted domains", func(s *JobSpec) { s.RequiredDomains = []string{"b", "a"} }, "sorted"},
		{"domains on llm", func(s *JobSpec) { s.JobType = JobTypeLLM; s.Bounds.MaxTokens = 5 }, "only apply to http"},
		{"input too big", func(s *JobSpec) { s.Input = make([]byte, MaxInputBytes+1) }, "input"},
		{"unknown mode", func(s *JobSpec) { s.Verification.Mode = 0 }, "mode"},
		{"majority with 2", func(s *JobSpec) {
			s.Verification = VerificationConfig{Mode: ModeMajorityVote, Runners: 2, VoteField: "/x"}
		}, "out of range"},
		{"majority needs field", func(s *JobSpec) { s.Verification = VerificationConfig{Mode: ModeMajorityVote, Runners: 3} }, "vote_field"},
		{"majority valid", func(s *JobSpec) {
			s.Verification = VerificationConfig{Mode: ModeMajorityVote, Runners: 5, VoteField: "/label"}
		}, ""},
		{"none with 2 runners", func(s *JobSpec) { s.Verification = VerificationConfig{Mode: ModeNone, Runners: 2} }, "exactly 1"},
		{"too many runners", func(s *JobSpec) { s.Verification.Runners = MaxRunners + 1 }, "out of range"},
		{"deterministic without tee", func(s *JobSpec) { s.Verification = VerificationConfig{Mode: ModeDeterministic, Runners: 2} }, "tee_required"},
		{"deterministic with tee", func(s *JobSpec) {
			s.Verification = VerificationConfig{Mode: ModeDeterministic, Runners: 2}
			s.TEERequired = true
		}, ""},
		{"semantic needs threshold", func(s *JobSpec) {
			s.Verification = VerificationConfig{Mode: ModeSemanticSimilarity, Runners: 3, EmbeddingDim: 8}
		}, "similarity_ppm"},
		{"semantic needs dim", func(s *JobSpec) {
			s.Verification = VerificationConfig{Mode: ModeSemanticSimilarity, Runners: 3, SimilarityPpm: 900_000}
		}, "embedding_dim"},
		{"structured needs checks", func(s *JobSpec) { s.Verification.Checks = nil }, "needs 1.."},
		{"structured on text", func(s *JobSpec) { s.ResultSchema.DataFormat = FormatText }, "requires the json"},
		{"check bad pointer", func(s *JobSpec) { s.Verification.Checks[1].Field = "price" }, "JSON Pointer"},
		{"check bad tolerance", func(s *JobSpec) { s.Verification.Checks[1].Tolerance = "1e-3" }, "tolerance"},
		{"check negative tolerance", func(s *JobSpec) { s.Verification.Checks[1].Tolerance = "-1" }, "tolerance"},
		{"range inverted", func(s *JobSpec) { s.Verification.Checks[2].Min = "5"; s.Verification.Checks[2].Max = "4" }, "min exceeds max"},
		{"schema check without schema", func(s *JobSpec) { s.Verification.Checks[0].Schema = nil }, "schema is required"},
		{"quorum above runners impossible", func(s *JobSpec) { s.Verification.QuorumBps = 10_001 }, "quorum_bps"},
		{"vote field on structured", func(s *JobSpec) { s.Verification.VoteField = "/a" }, "vote_field only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			s.Verification.Checks = slices.Clone(s.Verification.Checks)
			tc.mut(&s)
			err := s.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want error containing %q, got %v", tc.want, err)
			}
		})
	}
}

func TestQuorum(t *testing.T) {
	tests := []struct {
		cfg  VerificationConfig
		want int
	}{
		{VerificationConfig{Mode: ModeNone, Runners: 1}, 1},
		{VerificationConfig{Mode: ModeMajorityVote, Runners: 3}, 2},
		{VerificationConfig{Mode: ModeMajorityVote, Runners: 4}, 3},
		{VerificationConfig{Mode: ModeDeterministic, Runners: 3}, 3},
		{VerificationConfig{Mode: ModeSemanticSimilarity, Runners: 5, QuorumBps: 6000}, 3},
		{VerificationConfig{Mode: ModeSemanticSimilarity, Runners: 5, QuorumBps: 6001}, 4},
		{VerificationConfig{Mode: ModeStructuredMatch, Runners: 2, QuorumBps: 1}, 1},
	}
	for _, tc := range tests {
		if got := tc.cfg.Quorum(); got != tc.want {
			t.Errorf("%+v: quorum %d, want %d", tc.cfg, got, tc.want)
		}
	}
}

func TestRateCardCost(t *testing.T) {
	r := RateCard{Base: big.NewInt(100), PerToken: big.NewInt(2), PerWallMs: big.NewInt(3), PerMemoryMiB: big.NewInt(5)}
	u := Usage{Tokens: 10, WallTimeMs: 7, MemoryBytes: MiB + 1}
	// 100 + 20 + 21 + 2·5
	if got := r.Cost(u); got.Int64() != 151 {
		t.Fatalf("cost %v", got)
	}
	if got := (RateCard{}).Cost(u); got.Sign() != 0 {
		t.Fatalf("empty card cost %v", got)
	}
	if (RateCard{Base: big.NewInt(-1)}).Validate() == nil {
		t.Fatal("negative rate accepted")
	}
}

func TestEncodingAndID(t *testing.T) {
	s := validSpec()
	enc, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeJobSpec(enc)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := d.Encode()
	if !bytes.Equal(enc, again) {
		t.Fatal("round trip changed bytes")
	}
	id1, _ := s.DeriveID(0)
	id2, _ := s.DeriveID(1)
	s.JobID = id1
	id3, _ := s.DeriveID(0)
	if id1 == id2 || id1 != id3 {
		t.Fatal("job id must depend on the nonce and ignore job_id")
	}
	// Exact preimage.
	c := validSpec()
	pre, _ := c.Encode()
	want := types.Keccak256([]byte("cowboy-job-id-v1:"), pre, []byte{0, 0, 0, 0, 0, 0, 0, 0})
	if id1 != want {
		t.Fatal("job id preimage changed")
	}
	// Non-canonical input is rejected: a small max_price as a bignum tag.
	if _, err := DecodeJobSpec(append(enc, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func FuzzDecodeJobSpec(f *testing.F) {
	s := validSpec()
	enc, _ := s.Encode()
	f.Add(enc)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeJobSpec(data)
		if err != nil {
			return
		}
		again, err := d.Encode()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("round trip: %x -> %x (%v)", data, again, err)
		}
		_ = d.Validate()
	})
}

func FuzzDecodeJob(f *testing.F) {
	j := New(validSpec(), types.Hash{1}, types.Hash{2})
	j, _, _ = Step(j, Assigned{At: 1, Runners: []types.Address{addr(1), addr(2), addr(3)}, Aggregator: addr(2)}, DefaultParams())
	j, _, _ = Step(j, Committed{At: 2, Runner: addr(3), Hash: types.Hash{3}}, DefaultParams())
	enc, _ := j.Encode()
	f.Add(enc)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeJob(data)
		if err != nil {
			return
		}
		again, err := d.Encode()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("round trip: %x -> %x (%v)", data, again, err)
		}
	})
}

// --- lifecycle --------------------------------------------------------------

type step struct {
	ev      Event
	state   State
	effects []EffectKind
	err     bool
}

func run(t *testing.T, j Job, steps []step) Job {
	t.Helper()
	p := DefaultParams()
	for i, s := range steps {
		before, _ := j.Encode()
		n, fx, err := Step(j, s.ev, p)
		after, _ := j.Encode()
		if !bytes.Equal(before, after) {
			t.Fatalf("step %d: Step mutated its input", i)
		}
		if s.err {
			if !errors.Is(err, ErrTransition) {
				t.Fatalf("step %d (%T): want ErrTransition, got %v", i, s.ev, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d (%T): %v", i, s.ev, err)
		}
		if n.State != s.state {
			t.Fatalf("step %d (%T): state %s, want %s", i, s.ev, n.State, s.state)
		}
		var kinds []EffectKind
		for _, e := range fx {
			kinds = append(kinds, e.Kind)
		}
		if !slices.Equal(kinds, s.effects) {
			t.Fatalf("step %d (%T): effects %v, want %v", i, s.ev, kinds, s.effects)
		}
		j = n
	}
	return j
}

func threeRunnerJob() Job {
	s := validSpec()
	s.JobID, _ = s.DeriveID(0)
	return New(s, types.Hash{7}, types.Hash{8})
}

var r1, r2, r3, r4, r5, r6 = addr(1), addr(2), addr(3), addr(4), addr(5), addr(6)

func TestLifecycleHappyPath(t *testing.T) {
	j := run(t, threeRunnerJob(), []step{
		{ev: Committed{At: 100, Runner: r1}, err: true},
		{ev: Assigned{At: 100, Runners: []types.Address{r2, r1, r3}, Aggregator: r2}, state: StateAssigned},
		{ev: Assigned{At: 100, Runners: []types.Address{r2, r1, r3}, Aggregator: r2}, err: true},
		{ev: Committed{At: 101, Runner: r4}, err: true},
		{ev: Committed{At: 101, Runner: r1, Hash: types.Hash{1}}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r1, Hash: types.Hash{1}}, err: true},
		{ev: Committed{At: 102, Runner: r3, Hash: types.Hash{3}}, state: StateAssigned},
		{ev: Committed{At: 103, Runner: r2, Hash: types.Hash{2}}, state: StateCommitted},
		{ev: Verified{At: 104, Submitter: r1, Agreed: []types.Address{r1, r2}}, err: true},
		{ev: Verified{At: 104, Submitter: r2, Agreed: []types.Address{r1}}, err: true},
		{ev: Verified{At: 104, Submitter: r2, ResultHash: types.Hash{9}, Agreed: []types.Address{r2, r1}, Dissented: []types.Address{r3}}, state: StateVerified, effects: []EffectKind{EffectCallback}},
		{ev: Tick{At: 104 + 900}, state: StateVerified},
		{ev: Tick{At: 104 + 901}, state: StateFinalized, effects: []EffectKind{EffectSettle}},
		{ev: Tick{At: 2000}, err: true},
	})
	if !slices.Equal(j.Agreed, []types.Address{r1, r2}) || !slices.Equal(j.Dissented, []types.Address{r3}) {
		t.Fatalf("agreed %v dissented %v", j.Agreed, j.Dissented)
	}
}

func TestLifecycleRetriesThenFails(t *testing.T) {
	j := threeRunnerJob()
	sets := [][]types.Address{{r1, r2, r3}, {r4, r5, r6}, {addr(7), addr(8), addr(9)}, {addr(10), addr(11), addr(12)}}
	at := uint64(100)
	for attempt, set := range sets {
		j = run(t, j, []step{
			{ev: Assigned{At: at, Runners: set, Aggregator: set[0]}, state: StateAssigned},
			{ev: Committed{At: at + 1, Runner: set[0]}, state: StateAssigned},
			{ev: Tick{At: at + 20}, state: StateAssigned},
		})
		if attempt < 3 {
			j = run(t, j, []step{{ev: Tick{At: at + 21}, state: StatePending, effects: []EffectKind{EffectPenalize, EffectSelect}}})
			if j.Retry != uint32(attempt+1) {
				t.Fatalf("retry %d", j.Retry)
			}
			// Timed-out runners are excluded from later attempts.
			if !contains(j.Excluded, set[1]) || contains(j.Excluded, set[0]) {
				t.Fatalf("excluded %v", j.Excluded)
			}
			run(t, j, []step{{ev: Assigned{At: at, Runners: []types.Address{set[1], addr(50), addr(51)}, Aggregator: addr(50)}, err: true}})
		} else {
			j = run(t, j, []step{{ev: Tick{At: at + 21}, state: StateFailed, effects: []EffectKind{EffectPenalize, EffectPenalize, EffectRefund, EffectCallback}}})
			if j.Fail != FailTimeout {
				t.Fatalf("fail %d", j.Fail)
			}
		}
		at += 100
	}
}

func TestLifecycleQuorumAtDeadlineAndAggregatorFallback(t *testing.T) {
	j := run(t, threeRunnerJob(), []step{
		{ev: Assigned{At: 100, Runners: []types.Address{r1, r2, r3}, Aggregator: r1}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r1}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r2}, state: StateAssigned},
		// r3 never commits; 2 of 3 is the default quorum, so the job proceeds.
		{ev: Tick{At: 121}, state: StateCommitted, effects: []EffectKind{EffectPenalize}},
		{ev: Committed{At: 121, Runner: r3}, err: true},
		// The aggregator r1 stays silent: individual reveals open.
		{ev: Tick{At: 152}, state: StateRevealed, effects: []EffectKind{EffectPenalize}},
		{ev: Revealed{At: 153, Runner: r3}, err: true},
		{ev: Revealed{At: 153, Runner: r2}, state: StateRevealed},
		{ev: Revealed{At: 154, Runner: r1}, state: StateRevealed, effects: []EffectKind{EffectVerify}},
		{ev: Verified{At: 154, Submitter: r2, Agreed: []types.Address{r1, r2}}, state: StateVerified, effects: []EffectKind{EffectCallback}},
		{ev: Challenged{At: 200, Upheld: true}, state: StateFailed, effects: []EffectKind{EffectSlash, EffectRefund, EffectCallback}},
	})
	if j.Fail != FailChallenged || !slices.Equal(j.Runners, []types.Address{r1, r2}) {
		t.Fatalf("fail %d runners %v", j.Fail, j.Runners)
	}
}

func TestLifecycleFailures(t *testing.T) {
	run(t, threeRunnerJob(), []step{
		{ev: NoCandidates{At: 100}, state: StateFailed, effects: []EffectKind{EffectRefund, EffectCallback}},
	})
	run(t, threeRunnerJob(), []step{
		{ev: Assigned{At: 100, Runners: []types.Address{r1, r2, r3}, Aggregator: r1}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r1}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r2}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r3}, state: StateCommitted},
		{ev: Rejected{At: 102, Dissented: []types.Address{r3, r1, r2}}, state: StateFailed, effects: []EffectKind{EffectRefund, EffectCallback}},
	})
	run(t, threeRunnerJob(), []step{
		{ev: Assigned{At: 100, Runners: []types.Address{r1, r2, r3}, Aggregator: r1}, state: StateAssigned},
		{ev: Assigned{At: 100, Runners: []types.Address{r1, r2}, Aggregator: r1}, err: true},
		{ev: Committed{At: 121, Runner: r1}, err: true}, // after the deadline
		{ev: Committed{At: 101, Runner: r1}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r2}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r3}, state: StateCommitted},
		{ev: Tick{At: 132}, state: StateRevealed, effects: []EffectKind{EffectPenalize}},
		{ev: Tick{At: 163}, state: StateFailed, effects: []EffectKind{EffectPenalize, EffectRefund, EffectCallback}},
	})
	bad := []Job{threeRunnerJob()}
	if _, _, err := Step(bad[0], Assigned{At: 1, Runners: []types.Address{r1, r1, r2}, Aggregator: r1}, DefaultParams()); err == nil {
		t.Fatal("duplicate runners accepted")
	}
	if _, _, err := Step(bad[0], Assigned{At: 1, Runners: []types.Address{r1, r2, r3}, Aggregator: r4}, DefaultParams()); err == nil {
		t.Fatal("foreign aggregator accepted")
	}
}

func TestChallengeCulprits(t *testing.T) {
	verified := []step{
		{ev: Assigned{At: 100, Runners: []types.Address{r1, r2, r3}, Aggregator: r1}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r1}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r2}, state: StateAssigned},
		{ev: Committed{At: 101, Runner: r3}, state: StateCommitted},
		{ev: Verified{At: 102, Submitter: r1, Agreed: []types.Address{r1, r2}, Dissented: []types.Address{r3}}, state: StateVerified, effects: []EffectKind{EffectCallback}},
	}
	// A dissenter proven at fault is slashed; the result stands.
	j := run(t, threeRunnerJob(), append(slices.Clone(verified),
		step{ev: Challenged{At: 103, Upheld: true, Culprits: []types.Address{r3}}, state: StateVerified, effects: []EffectKind{EffectSlash}}))
	_, fx, _ := Step(run(t, threeRunnerJob(), verified), Challenged{At: 103, Upheld: true, Culprits: []types.Address{r3}}, DefaultParams())
	if len(fx) != 1 || !slices.Equal(fx[0].Runners, []types.Address{r3}) {
		t.Fatalf("dissenter slash effects %+v", fx)
	}
	// It can still be finalised and settled.
	run(t, j, []step{{ev: Tick{At: 102 + 901}, state: StateFinalized, effects: []EffectKind{EffectSettle}}})
	// An agreeing culprit fails the job; only it is slashed.
	j = run(t, threeRunnerJob(), append(slices.Clone(verified),
		step{ev: Challenged{At: 103, Upheld: true, Culprits: []types.Address{r2}}, state: StateFailed, effects: []EffectKind{EffectSlash, EffectRefund, EffectCallback}}))
	if j.Fail != FailChallenged {
		t.Fatalf("fail %d", j.Fail)
	}
	// A challenge that is not upheld changes nothing.
	run(t, threeRunnerJob(), append(slices.Clone(verified), step{ev: Challenged{At: 103}, state: StateVerified}))
}

// The job state has one definition: its JSON form is its name, as the API
// serves it and the runner reads it.
func TestStateText(t *testing.T) {
	for s := StatePending; s <= StateFailed; s++ {
		b, err := json.Marshal(s)
		if err != nil || string(b) != `"`+s.String()+`"` {
			t.Fatalf("%d: %s %v", s, b, err)
		}
		var back State
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Fatalf("%s: back %d %v", b, back, err)
		}
	}
	var s State
	if err := json.Unmarshal([]byte(`"invalid"`), &s); err == nil {
		t.Fatal("accepted the zero state's name")
	}
}

// The model id is an optional trailing element: a spec without one keeps
// its 16-element encoding (hence its job id), a spec with one has 17, and
// an explicit zero model id is not canonical.
func TestModelIDEncoding(t *testing.T) {
	s := validSpec()
	enc, _ := s.Encode()
	if enc[0] != 0x90 { // array(16)
		t.Fatalf("spec without a model id starts %#x, want array(16)", enc[0])
	}
	s.JobType, s.RequiredDomains, s.Bounds.MaxTokens = JobTypeLLM, nil, 10
	s.ModelID = types.Hash{0xAB}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	enc, _ = s.Encode()
	if enc[0] != 0x91 { // array(17)
		t.Fatalf("spec with a model id starts %#x, want array(17)", enc[0])
	}
	d, err := DecodeJobSpec(enc)
	if err != nil || d.ModelID != s.ModelID {
		t.Fatalf("decoded model %s: %v", d.ModelID, err)
	}
	zero := jobSpecV2{JobID: s.JobID, JobType: s.JobType, Bounds: s.Bounds, Verification: s.Verification, MaxPrice: s.MaxPrice, Tip: s.Tip,
		TimeoutBlocks: s.TimeoutBlocks, Callback: s.Callback, Submitter: s.Submitter, ResultSchema: s.ResultSchema, Input: s.Input}
	if _, err := DecodeJobSpec(codec.MustMarshal(zero)); err == nil {
		t.Fatal("explicit zero model id accepted")
	}
	h := validSpec()
	h.ModelID = types.Hash{1}
	if err := h.Validate(); err == nil {
		t.Fatal("model id on an http job accepted")
	}
}
