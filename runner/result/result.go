// Package result checks a job's output before the runner signs and commits
// it, so a runner never stakes its reputation on a result the chain or the
// actor would reject. It applies, in order:
//
//   - size: at most min(max_return_bytes, 64 KiB), the on-chain limit;
//   - empty: at least Policy.MinLength bytes besides white space, and for
//     JSON not a bare null, "", [] or {};
//   - data_format: UTF-8 text, or one JSON document as the Result Verifier
//     parses it;
//   - result_schema: the JSON Schema, through chain/offchain/verify — the
//     code the Result Verifier runs;
//   - chain rules: verify.CheckResult, the verifier's own per-result rules
//     for the job's mode (embedding shape for semantic_similarity);
//   - and for LLM jobs the checks of spec 002 "LLM Result Verification":
//     garbage (control characters; Shannon entropy below
//     Policy.MinEntropyBits on outputs of Policy.EntropyMinBytes or more) and
//     prompt-injection leak (chat-template system prompt markers, or a run of
//     Policy.LeakMinBytes of the job's system prompt).
//
// Every failure is a *CheckError naming the check; it matches
// ErrInvalidResult with errors.Is, except a job whose own result_schema does
// not compile, which matches executor.ErrBadInput (the actor's fault).
package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// ErrInvalidResult is matched by every failed check: the daemon declines to
// commit the result.
var ErrInvalidResult = errors.New("invalid result")

// Check names, as CheckError.Check reports them.
const (
	CheckSize       = "size"
	CheckEmpty      = "empty"
	CheckDataFormat = "data_format"
	CheckSchema     = "result_schema"
	CheckChainRules = "chain_rules"
	CheckGarbage    = "garbage"
	CheckPromptLeak = "prompt_leak"
)

// CheckError is a failed check.
type CheckError struct {
	Check  string // one of the Check* names
	Reason string
	err    error // the sentinel it matches
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("%v: %s check: %s", e.err, e.Check, e.Reason)
}

// Unwrap lets errors.Is match ErrInvalidResult (or executor.ErrBadInput).
func (e *CheckError) Unwrap() error { return e.err }

func fail(check, format string, args ...any) error {
	return &CheckError{Check: check, Reason: fmt.Sprintf(format, args...), err: ErrInvalidResult}
}

// Policy holds the thresholds of the empty, garbage and leak checks. The zero
// value selects DefaultPolicy's values field by field.
type Policy struct {
	// MinLength is the minimum output length in bytes, not counting
	// leading and trailing white space. Default 1.
	MinLength int `toml:"min_length" json:"min_length"`
	// MinEntropyBits is the minimum Shannon entropy, in bits per byte, of
	// an LLM output of at least EntropyMinBytes bytes. Default 1.0: a run
	// of one repeated character has 0, "abab…" has 1, English prose about 4.
	MinEntropyBits float64 `toml:"min_entropy_bits" json:"min_entropy_bits"`
	// EntropyMinBytes is the length from which the entropy check applies;
	// shorter outputs ("yes", "42") are too short to judge. Default 32.
	EntropyMinBytes int `toml:"entropy_min_bytes" json:"entropy_min_bytes"`
	// Markers are chat-template control sequences that never belong in a
	// completion; their presence means the model echoed its prompt frame.
	// Default DefaultMarkers.
	Markers []string `toml:"markers" json:"markers"`
	// LeakMinBytes is the length of the shortest run of the system prompt
	// (compared case-insensitively, white space collapsed) whose presence
	// in the output counts as a leak. A system prompt shorter than this
	// counts only if it appears whole and is at least 16 bytes. Default 48.
	LeakMinBytes int `toml:"leak_min_bytes" json:"leak_min_bytes"`
}

// DefaultMarkers are the system-prompt markers of common chat templates
// (ChatML, Llama 2/3, Gemma, Zephyr/Phi, GPT end-of-text).
var DefaultMarkers = []string{
	"<|im_start|>", "<|im_end|>", "<|system|>", "<|user|>", "<|assistant|>",
	"<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|begin_of_text|>",
	"<|endoftext|>", "<<SYS>>", "<</SYS>>", "[INST]", "[/INST]",
	"<start_of_turn>", "<end_of_turn>",
}

// DefaultPolicy returns the default thresholds.
func DefaultPolicy() Policy {
	return Policy{MinLength: 1, MinEntropyBits: 1.0, EntropyMinBytes: 32, Markers: DefaultMarkers, LeakMinBytes: 48}
}

func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.MinLength <= 0 {
		p.MinLength = d.MinLength
	}
	if p.MinEntropyBits <= 0 {
		p.MinEntropyBits = d.MinEntropyBits
	}
	if p.EntropyMinBytes <= 0 {
		p.EntropyMinBytes = d.EntropyMinBytes
	}
	if p.Markers == nil {
		p.Markers = d.Markers
	}
	if p.LeakMinBytes <= 0 {
		p.LeakMinBytes = d.LeakMinBytes
	}
	return p
}

// Check validates res for spec under DefaultPolicy. systemPrompt is the
// system prompt an LLM job ran with (nil if none or not an LLM job).
func Check(spec *job.JobSpec, res executor.Result, systemPrompt []byte) error {
	return DefaultPolicy().Check(spec, res, systemPrompt)
}

// Check validates res for spec; see the package documentation for the
// checks and their order.
func (p Policy) Check(spec *job.JobSpec, res executor.Result, systemPrompt []byte) error {
	if spec == nil {
		return fmt.Errorf("%w: no job spec", executor.ErrBadInput)
	}
	p = p.withDefaults()
	out := res.Output
	if lim := verify.MaxResultBytes(spec); len(out) > lim {
		return fail(CheckSize, "result is %d bytes, limit %d (max_return_bytes %d, on-chain limit %d)",
			len(out), lim, spec.ResultSchema.MaxReturnBytes, job.MaxInlineResultBytes)
	}
	if n := len(bytes.TrimSpace(out)); n < p.MinLength {
		return fail(CheckEmpty, "result has %d bytes besides white space, minimum %d", n, p.MinLength)
	}
	switch spec.ResultSchema.DataFormat {
	case job.FormatText:
		if !utf8.Valid(out) {
			return fail(CheckDataFormat, "result is not UTF-8 text")
		}
	case job.FormatJSON:
		doc, err := verify.ParseJSON(out)
		if err != nil {
			return fail(CheckDataFormat, "result is not JSON: %v", err)
		}
		if emptyJSON(doc) {
			return fail(CheckEmpty, "result is an empty JSON value (%s)", bytes.TrimSpace(out))
		}
	}
	// Size, emptiness and format passed, so a CheckFormat failure is the
	// schema's.
	if err := verify.CheckFormat(spec, out); err != nil {
		if errors.Is(err, verify.ErrBadSchema) {
			return &CheckError{Check: CheckSchema, Reason: "the job's result_schema does not compile: " + err.Error(), err: executor.ErrBadInput}
		}
		return fail(CheckSchema, "%v", err)
	}
	if err := verify.CheckResult(spec, out, res.Embedding); err != nil {
		return fail(CheckChainRules, "%v", err)
	}
	if spec.JobType != job.JobTypeLLM || spec.ResultSchema.DataFormat == job.FormatBinary {
		return nil
	}
	if err := p.garbage(out); err != nil {
		return err
	}
	return p.leak(out, systemPrompt)
}

// emptyJSON: null, "", [] and {} carry no result.
func emptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	case json.Number, bool:
		return false
	}
	return false
}

func (p Policy) garbage(out []byte) error {
	for i, r := range string(out) {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t') {
			if r == utf8.RuneError {
				if _, size := utf8.DecodeRune(out[i:]); size <= 1 {
					return fail(CheckGarbage, "invalid UTF-8 at byte %d", i)
				}
				continue // a real U+FFFD in valid text is allowed
			}
			return fail(CheckGarbage, "control character U+%04X at byte %d", r, i)
		}
	}
	if len(out) >= p.EntropyMinBytes {
		if h := entropy(out); h < p.MinEntropyBits {
			return fail(CheckGarbage, "entropy %.2f bits/byte over %d bytes, minimum %.2f", h, len(out), p.MinEntropyBits)
		}
	}
	return nil
}

// entropy is the Shannon entropy of b's byte distribution in bits per byte.
func entropy(b []byte) float64 {
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	n := float64(len(b))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

func (p Policy) leak(out, systemPrompt []byte) error {
	for _, m := range p.Markers {
		if m != "" && bytes.Contains(out, []byte(m)) {
			return fail(CheckPromptLeak, "result contains the system prompt marker %q", m)
		}
	}
	prompt := fold(systemPrompt)
	if len(prompt) == 0 {
		return nil
	}
	text := fold(out)
	w := p.LeakMinBytes
	if len(prompt) < w {
		if len(prompt) >= 16 && bytes.Contains(text, prompt) {
			return fail(CheckPromptLeak, "result contains the system prompt")
		}
		return nil
	}
	if at := sharedRun(prompt, text, w); at >= 0 {
		return fail(CheckPromptLeak, "result repeats %d bytes of the system prompt from its byte %d on", w, at)
	}
	return nil
}

// fold lower-cases b and collapses white space runs to one space, so a leak
// reformatted by the model is still found.
func fold(b []byte) []byte {
	return []byte(strings.Join(strings.Fields(strings.ToLower(string(b))), " "))
}

// sharedRun returns the offset in a of a w-byte window that also occurs in
// b, or -1. It hashes b's windows once (Rabin–Karp) so the cost is linear in
// len(a)+len(b), not their product.
func sharedRun(a, b []byte, w int) int {
	if w <= 0 || len(a) < w || len(b) < w {
		return -1
	}
	const base = 1_000_003
	var pow uint64 = 1
	for range w - 1 {
		pow *= base
	}
	roll := func(s []byte, visit func(i int, h uint64) bool) {
		var h uint64
		for i := range w {
			h = h*base + uint64(s[i])
		}
		if !visit(0, h) {
			return
		}
		for i := w; i < len(s); i++ {
			h = (h-uint64(s[i-w])*pow)*base + uint64(s[i])
			if !visit(i-w+1, h) {
				return
			}
		}
	}
	seen := make(map[uint64][]int, len(b)-w+1)
	roll(b, func(i int, h uint64) bool {
		if l := seen[h]; len(l) < 8 { // bound work on hostile collisions
			seen[h] = append(l, i)
		}
		return true
	})
	found := -1
	roll(a, func(i int, h uint64) bool {
		for _, j := range seen[h] {
			if bytes.Equal(a[i:i+w], b[j:j+w]) {
				found = i
				return false
			}
		}
		return true
	})
	return found
}
