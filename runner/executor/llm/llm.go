// Package llm is the runner's executor for LLM jobs (job.JobTypeLLM): chat
// completions against OpenAI-compatible endpoints (OpenAI, vLLM, llama.cpp
// server, Ollama) through go-openai, configured per model, with the job's
// seed and temperature, JSON-Schema structured output, optional streaming,
// token accounting bounded by the job, and embeddings for
// semantic-similarity jobs in the fixed-point form the verifier checks.
//
// The result bytes are the assistant's message content: verbatim for the
// text and binary data formats, and canonical JSON (package jsoncanon) for
// the JSON format, so committee members whose models produced the same JSON
// value commit the same bytes. Package standin is an in-process
// OpenAI-compatible server for tests and the demo.
package llm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/codec/jsoncanon"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	openai "github.com/sashabaranov/go-openai"
)

// Executor runs LLM jobs. It is safe for concurrent use.
type Executor struct {
	models map[string]*model
	names  []string
	http   *http.Client
	log    *slog.Logger
}

type model struct {
	cfg    ModelConfig
	client *openai.Client
}

var _ executor.Executor = (*Executor)(nil)

// New checks cfg and returns an executor. It does not contact the servers.
func New(cfg Config) (*Executor, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc := *base
	hc.Transport = &limitTransport{next: rt}
	e := &Executor{models: map[string]*model{}, http: &hc, log: log}
	for _, mc := range cfg.Models {
		key, err := mc.apiKey()
		if err != nil {
			return nil, fmt.Errorf("llm: %w", err)
		}
		oc := openai.DefaultConfig(key)
		oc.BaseURL = strings.TrimRight(mc.BaseURL, "/")
		oc.HTTPClient = &hc
		e.models[mc.Name] = &model{cfg: mc, client: openai.NewClientWithConfig(oc)}
		e.names = append(e.names, mc.Name)
	}
	return e, nil
}

// Type is job.JobTypeLLM.
func (e *Executor) Type() job.JobType { return job.JobTypeLLM }

// Models lists the configured model names in configuration order.
func (e *Executor) Models() []string { return append([]string(nil), e.names...) }

// Probe asks every configured server for its model list and checks that
// each model's upstream id (and embeddings model) is served, so an operator
// sees a wrong base_url, key or model name before a job fails on it. The
// result maps model names to their problem; an empty map means all is well.
// Servers without GET /models (some proxies) report that as the problem.
func (e *Executor) Probe(ctx context.Context) map[string]error {
	out := map[string]error{}
	for _, name := range e.names {
		m := e.models[name]
		list, err := m.client.ListModels(ctx)
		if err != nil {
			out[name] = fmt.Errorf("list models at %s: %w", m.cfg.BaseURL, err)
			continue
		}
		ids := map[string]bool{}
		for _, md := range list.Models {
			ids[md.ID] = true
		}
		if !ids[m.cfg.upstream()] {
			out[name] = fmt.Errorf("%s does not serve model %q", m.cfg.BaseURL, m.cfg.upstream())
		} else if m.cfg.EmbeddingsModel != "" && !ids[m.cfg.EmbeddingsModel] {
			out[name] = fmt.Errorf("%s does not serve embeddings model %q", m.cfg.BaseURL, m.cfg.EmbeddingsModel)
		}
	}
	return out
}

// Close releases idle connections. Safe to call more than once.
func (e *Executor) Close() error {
	e.http.CloseIdleConnections()
	return nil
}

// Execute runs one LLM job.
func (e *Executor) Execute(ctx context.Context, req executor.Request) (executor.Result, error) {
	spec := req.Spec
	if spec == nil {
		return executor.Result{}, fmt.Errorf("llm: %w: no job spec", executor.ErrBadInput)
	}
	if spec.JobType != job.JobTypeLLM {
		return executor.Result{}, fmt.Errorf("llm: %w: job type %s", executor.ErrBadInput, spec.JobType)
	}
	in, err := ParseInput(spec.Input)
	if err != nil {
		return executor.Result{}, fmt.Errorf("llm: %w: %w", executor.ErrBadInput, err)
	}
	if len(req.Inputs) > 0 {
		if err := in.expandVolumes(req.Inputs); err != nil {
			return executor.Result{}, fmt.Errorf("llm: %w", err)
		}
	}
	if id := spec.ModelID; id != (types.Hash{}) && in.Model != id.String() {
		// A job naming a registry model names it in its input too, so
		// that the chain's model_id and the model run cannot differ.
		return executor.Result{}, fmt.Errorf("llm: %w: input model %q is not the job's model_id %s", executor.ErrBadInput, in.Model, id)
	}
	m, ok := e.models[in.Model]
	if !ok && spec.ModelID != (types.Hash{}) {
		// Selection offers a registry model's job only to runners declaring
		// it: a declaration without a configured model is this runner's fault.
		return executor.Result{}, fmt.Errorf("llm: %w: registry model %s is declared but not configured here", executor.ErrRefused, in.Model)
	}
	if !ok {
		return executor.Result{}, fmt.Errorf("llm: %w: model %q is not served here (served: %s)", executor.ErrBadInput, in.Model, strings.Join(e.names, ", "))
	}
	semantic := spec.Verification.Mode == job.ModeSemanticSimilarity
	var em *model
	if semantic {
		name := in.Model
		if in.Embed != nil && in.Embed.Model != "" {
			name = in.Embed.Model
		}
		em, ok = e.models[name]
		if !ok {
			return executor.Result{}, fmt.Errorf("llm: %w: embeddings model %q is not served here", executor.ErrBadInput, name)
		}
		if em.cfg.EmbeddingsModel == "" {
			return executor.Result{}, fmt.Errorf("llm: %w: model %q has no embeddings_model configured", executor.ErrRefused, name)
		}
	} else if in.Embed != nil {
		return executor.Result{}, fmt.Errorf("llm: %w: embed applies only to semantic_similarity jobs", executor.ErrBadInput)
	}
	if m.cfg.FixedSampling && (in.Temperature != nil || in.TopP != nil) {
		return executor.Result{}, fmt.Errorf("llm: %w: model %q takes no temperature or top_p", executor.ErrRefused, in.Model)
	}
	bound := spec.Bounds.MaxTokens
	if bound == 0 {
		return executor.Result{}, fmt.Errorf("llm: %w: bounds.max_tokens is 0", executor.ErrBadInput)
	}
	if in.MaxTokens > bound {
		return executor.Result{}, fmt.Errorf("llm: %w: input max_tokens %d exceeds bounds.max_tokens %d", executor.ErrBadInput, in.MaxTokens, bound)
	}

	start := time.Now()
	creq, err := e.chatRequest(req, in, m)
	if err != nil {
		return executor.Result{}, err
	}
	var out completion
	for attempt := 0; ; attempt++ {
		if in.Stream {
			out, err = e.streamChat(ctx, m, creq, spec)
		} else {
			out, err = e.chat(ctx, m, creq, spec)
		}
		if err == nil || attempt+1 >= maxAttempts || !retryable(err) || !sleepCtx(ctx, retryBackoff<<attempt) {
			break
		}
		e.log.Debug("llm upstream busy; retrying", "job", req.JobID, "model", in.Model, "attempt", attempt+1, "err", err)
	}
	if err != nil {
		return executor.Result{}, e.classify(ctx, spec, err)
	}
	usage := job.Usage{Tokens: out.tokens, MemoryBytes: out.held}
	if usage.Tokens > bound {
		return executor.Result{}, fmt.Errorf("llm: %w: server reports %d tokens (prompt %d + completion %d), bounds.max_tokens %d",
			executor.ErrBoundExceeded, usage.Tokens, out.prompt, out.completion, bound)
	}
	output, err := resultBytes(spec, out.content)
	if err != nil {
		if out.finish == "length" {
			err = fmt.Errorf("%w (the completion stopped at its %d-token budget; raise bounds.max_tokens)", err, budgetOf(creq))
		}
		return executor.Result{}, err
	}
	if lim := verify.MaxResultBytes(spec); len(output) > lim {
		return executor.Result{}, fmt.Errorf("llm: %w: result is %d bytes, max_return_bytes %d", executor.ErrBoundExceeded, len(output), lim)
	}
	res := executor.Result{Output: output}
	if semantic {
		vec, etok, held, err := e.embed(ctx, em, spec, output)
		if err != nil {
			return executor.Result{}, e.classify(ctx, spec, err)
		}
		usage.Tokens += etok
		usage.MemoryBytes = max(usage.MemoryBytes, held)
		if usage.Tokens > bound {
			return executor.Result{}, fmt.Errorf("llm: %w: %d tokens with embeddings, bounds.max_tokens %d", executor.ErrBoundExceeded, usage.Tokens, bound)
		}
		res.Embedding = vec
	}
	usage.WallTimeMs = uint64(time.Since(start).Milliseconds())
	if usage.WallTimeMs == 0 {
		usage.WallTimeMs = 1
	}
	res.Usage = usage
	e.log.Debug("llm job done", "job", req.JobID, "model", in.Model, "stream", in.Stream,
		"tokens", usage.Tokens, "bytes", len(output), "ms", usage.WallTimeMs)
	return res, nil
}

// Retries of calls that produced nothing: rate limiting and overloaded or
// unreachable servers are common with hosted APIs and usually pass within
// a second; the job's deadline bounds the waiting.
const (
	maxAttempts  = 3
	retryBackoff = 250 * time.Millisecond
)

// retryable reports whether a failed call produced no completion and may be
// repeated: HTTP 429, 502, 503 or 504, or a connection that was refused.
func retryable(err error) bool {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	code := 0
	switch {
	case errors.As(err, &apiErr):
		code = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		code = reqErr.HTTPStatusCode
	default:
		var opErr *net.OpError
		return errors.As(err, &opErr) && opErr.Op == "dial"
	}
	return code == http.StatusTooManyRequests || code == http.StatusBadGateway ||
		code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
}

// sleepCtx waits d, or returns false at once if ctx ends first or has less
// than d left.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// classify wraps an upstream failure: the job's wall-time bound when ctx is
// done, a bound error as is, everything else as the upstream's.
func (e *Executor) classify(ctx context.Context, spec *job.JobSpec, err error) error {
	switch {
	case errors.Is(err, executor.ErrBoundExceeded), errors.Is(err, executor.ErrBadInput),
		errors.Is(err, executor.ErrRefused), errors.Is(err, executor.ErrUpstream):
		return fmt.Errorf("llm: %w", err)
	case ctx.Err() != nil:
		return fmt.Errorf("llm: %w: wall time %d ms: %w", executor.ErrBoundExceeded, spec.Bounds.MaxWallTimeMs, err)
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return fmt.Errorf("llm: %w: server answered %d: %s", executor.ErrUpstream, apiErr.HTTPStatusCode, apiErr.Message)
	}
	return fmt.Errorf("llm: %w: %w", executor.ErrUpstream, err)
}

// Prompt-size estimate used to leave room for the prompt inside the job's
// token bound: at most one token per promptBytesPerToken bytes of text plus
// a per-message template overhead. BPE tokenisers average about four bytes
// per token on English and about three on CJK text, so this errs towards a
// smaller completion budget; the server's reported usage is what is
// checked and billed.
const (
	promptBytesPerToken = 3
	tokensPerMessage    = 4
	tokensPerReply      = 3
)

// completionBudget is the max_tokens sent upstream: the job's bound minus
// the prompt estimate (at least 1), or the input's max_tokens if smaller,
// capped by the model's configured max_tokens. Only the cap depends on the
// runner, so committee members with default configs truncate alike.
func completionBudget(bound uint64, in *Input, cap uint64) uint64 {
	est := uint64(tokensPerReply)
	for _, msg := range in.chatMessages() {
		est += tokensPerMessage + uint64(len(msg.Content)+promptBytesPerToken-1)/promptBytesPerToken
	}
	budget := uint64(1)
	if bound > est {
		budget = bound - est
	}
	if in.MaxTokens > 0 && in.MaxTokens < budget {
		budget = in.MaxTokens
	}
	if cap > 0 && cap < budget {
		budget = cap
	}
	return budget
}

// defaultSeed derives the seed from the job id so every committee member
// sends the same one; 31 bits because llama.cpp and others take int32.
func defaultSeed(id [32]byte) int {
	return int(binary.BigEndian.Uint32(id[:4]) & 0x7fffffff)
}

func (e *Executor) chatRequest(req executor.Request, in *Input, m *model) (openai.ChatCompletionRequest, error) {
	spec := req.Spec
	budget := completionBudget(spec.Bounds.MaxTokens, in, m.cfg.MaxTokens)
	if budget > math.MaxInt32 {
		budget = math.MaxInt32
	}
	cr := openai.ChatCompletionRequest{
		Model: m.cfg.upstream(),
		Stop:  in.Stop,
	}
	for _, msg := range in.chatMessages() {
		cr.Messages = append(cr.Messages, openai.ChatCompletionMessage{Role: msg.Role, Content: msg.Content})
	}
	if m.cfg.MaxCompletionTokensField {
		cr.MaxCompletionTokens = int(budget)
	} else {
		cr.MaxTokens = int(budget)
	}
	if !m.cfg.FixedSampling {
		// go-openai omits a zero temperature (omitempty) and servers then
		// use their default of 1; the smallest positive float32 is its
		// documented way to ask for greedy decoding.
		temp := 0.0
		if in.Temperature != nil {
			temp = *in.Temperature
		}
		cr.Temperature = float32(temp)
		if cr.Temperature == 0 {
			cr.Temperature = math.SmallestNonzeroFloat32
		}
		if in.TopP != nil {
			cr.TopP = float32(*in.TopP)
		}
		seed := defaultSeed(req.JobID)
		if in.Seed != nil {
			seed = int(*in.Seed)
		}
		cr.Seed = &seed
	}
	if spec.ResultSchema.DataFormat == job.FormatJSON {
		if len(spec.ResultSchema.JSONSchema) > 0 {
			if !json.Valid(spec.ResultSchema.JSONSchema) {
				return cr, fmt.Errorf("llm: %w: result_schema.json_schema is not JSON", executor.ErrBadInput)
			}
			cr.ResponseFormat = &openai.ChatCompletionResponseFormat{
				Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
					Name:   "result",
					Schema: json.RawMessage(spec.ResultSchema.JSONSchema),
					Strict: m.cfg.StrictSchema,
				},
			}
		} else {
			cr.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
		}
	}
	return cr, nil
}

// budgetOf is the completion budget a request carries.
func budgetOf(cr openai.ChatCompletionRequest) int { return max(cr.MaxTokens, cr.MaxCompletionTokens) }

// completion is what came back from the chat call.
type completion struct {
	content    string
	prompt     uint64
	completion uint64
	tokens     uint64
	held       uint64 // response bytes held
	finish     string
}

// memoryLimit is the response-bytes bound of a job (MaxMemoryBytes), or a
// 64 MiB safety cap when the job sets none.
func memoryLimit(spec *job.JobSpec) int64 {
	if spec.Bounds.MaxMemoryBytes == 0 || spec.Bounds.MaxMemoryBytes > 1<<40 {
		return 64 << 20
	}
	return int64(spec.Bounds.MaxMemoryBytes)
}

func (e *Executor) chat(ctx context.Context, m *model, cr openai.ChatCompletionRequest, spec *job.JobSpec) (completion, error) {
	lim := &bodyLimit{max: memoryLimit(spec)}
	resp, err := m.client.CreateChatCompletion(withBodyLimit(ctx, lim), cr)
	if lim.exceeded.Load() {
		return completion{}, fmt.Errorf("%w: response exceeds bounds.max_memory_bytes %d", executor.ErrBoundExceeded, lim.max)
	}
	if err := lim.textFault(); err != nil {
		return completion{}, err
	}
	if err != nil {
		return completion{}, fmt.Errorf("chat completion: %w", err)
	}
	if len(resp.Choices) == 0 {
		return completion{}, fmt.Errorf("%w: response has no choices", executor.ErrUpstream)
	}
	if resp.Usage.TotalTokens == 0 && resp.Usage.PromptTokens == 0 && resp.Usage.CompletionTokens == 0 {
		return completion{}, fmt.Errorf("%w: server reported no token usage", executor.ErrUpstream)
	}
	u := resp.Usage
	return completion{
		content:    resp.Choices[0].Message.Content,
		prompt:     uint64(max(u.PromptTokens, 0)),
		completion: uint64(max(u.CompletionTokens, 0)),
		tokens:     usageTotal(u),
		held:       uint64(lim.read.Load()),
		finish:     string(resp.Choices[0].FinishReason),
	}, nil
}

func usageTotal(u openai.Usage) uint64 {
	t := max(u.TotalTokens, u.PromptTokens+u.CompletionTokens, 0)
	return uint64(t)
}

// Per-chunk wire overhead allowed while streaming: an SSE chunk repeats id,
// model and fingerprint around each delta.
const streamChunkOverhead = 4 << 10

func (e *Executor) streamChat(ctx context.Context, m *model, cr openai.ChatCompletionRequest, spec *job.JobSpec) (completion, error) {
	memLim := memoryLimit(spec)
	budget := uint64(budgetOf(cr))
	contentLim := min(int64(verify.MaxResultBytes(spec))*4+4096, memLim) // JSON may shrink when canonicalised
	wire := &bodyLimit{max: memLim + int64(budget+16)*streamChunkOverhead}
	cr.Stream = true
	cr.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := m.client.CreateChatCompletionStream(withBodyLimit(ctx, wire), cr)
	if err != nil {
		if wire.exceeded.Load() {
			return completion{}, fmt.Errorf("%w: stream exceeds its byte bound", executor.ErrBoundExceeded)
		}
		if terr := wire.textFault(); terr != nil {
			return completion{}, terr
		}
		return completion{}, fmt.Errorf("chat completion stream: %w", err)
	}
	defer stream.Close()
	var (
		buf    strings.Builder
		chunks uint64
		u      *openai.Usage
		finish string
	)
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if wire.exceeded.Load() {
				return completion{}, fmt.Errorf("%w: stream exceeds its byte bound", executor.ErrBoundExceeded)
			}
			if terr := wire.textFault(); terr != nil {
				return completion{}, terr
			}
			return completion{}, fmt.Errorf("stream: %w", err)
		}
		if resp.Usage != nil {
			u = resp.Usage
		}
		for _, ch := range resp.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.Content != "" {
				buf.WriteString(ch.Delta.Content)
				chunks++
			}
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
		// A server that ignores max_tokens is cut off here: every content
		// chunk carries at least one token, so more chunks than the budget
		// means more tokens than were asked for.
		if budget > 0 && chunks > budget {
			return completion{}, fmt.Errorf("%w: stream passed the %d-token completion budget", executor.ErrBoundExceeded, budget)
		}
		if int64(buf.Len()) > contentLim {
			return completion{}, fmt.Errorf("%w: streamed content passed %d bytes", executor.ErrBoundExceeded, contentLim)
		}
	}
	if terr := wire.textFault(); terr != nil {
		return completion{}, terr // seen at the end of the stream
	}
	if u == nil {
		return completion{}, fmt.Errorf("%w: stream carried no usage chunk (the server must support stream_options.include_usage)", executor.ErrUpstream)
	}
	return completion{
		content:    buf.String(),
		prompt:     uint64(max(u.PromptTokens, 0)),
		completion: uint64(max(u.CompletionTokens, 0)),
		tokens:     usageTotal(*u),
		held:       uint64(buf.Len()),
		finish:     finish,
	}, nil
}

// resultBytes turns the assistant content into the committed result.
func resultBytes(spec *job.JobSpec, content string) ([]byte, error) {
	switch spec.ResultSchema.DataFormat {
	case job.FormatJSON:
		doc := stripFence(content)
		// The model's JSON may escape a lone surrogate, which the
		// canonicaliser would turn into U+FFFD.
		if err := executor.CheckText([]byte(doc)); err != nil {
			return nil, fmt.Errorf("llm: %w: model output: %w", executor.ErrUpstream, err)
		}
		out, err := jsoncanon.Canonicalize([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("llm: %w: model output is not JSON: %w", executor.ErrUpstream, err)
		}
		return out, nil
	case job.FormatText:
		if !utf8.ValidString(content) {
			return nil, fmt.Errorf("llm: %w: %w: model output", executor.ErrUpstream, executor.ErrNotUTF8)
		}
	}
	return []byte(content), nil
}

// stripFence removes a Markdown code fence (```json … ```) around a JSON
// answer, which chat models add even when asked for JSON.
func stripFence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	t = strings.TrimSuffix(t, "```")
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		return s
	}
	return t[nl+1:]
}

// embed embeds the result text with em's embeddings model at the job's
// dimension and quantises it (see Quantize).
func (e *Executor) embed(ctx context.Context, em *model, spec *job.JobSpec, output []byte) ([]int32, uint64, uint64, error) {
	dim := int(spec.Verification.EmbeddingDim)
	if dim <= 0 || dim > job.MaxEmbeddingDim {
		return nil, 0, 0, fmt.Errorf("%w: verification.embedding_dim %d", executor.ErrBadInput, dim)
	}
	lim := &bodyLimit{max: memoryLimit(spec)}
	resp, err := em.client.CreateEmbeddings(withBodyLimit(ctx, lim), openai.EmbeddingRequest{
		Input:      []string{string(output)},
		Model:      openai.EmbeddingModel(em.cfg.EmbeddingsModel),
		Dimensions: dim,
	})
	if lim.exceeded.Load() {
		return nil, 0, 0, fmt.Errorf("%w: embeddings response exceeds bounds.max_memory_bytes %d", executor.ErrBoundExceeded, lim.max)
	}
	if terr := lim.textFault(); terr != nil {
		return nil, 0, 0, terr
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("embeddings: %w", err)
	}
	if len(resp.Data) != 1 {
		return nil, 0, 0, fmt.Errorf("%w: embeddings response has %d vectors, want 1", executor.ErrUpstream, len(resp.Data))
	}
	if got := len(resp.Data[0].Embedding); got != dim {
		return nil, 0, 0, fmt.Errorf("%w: embeddings model %q returned %d dimensions, job wants %d", executor.ErrRefused, em.cfg.EmbeddingsModel, got, dim)
	}
	vec, err := Quantize(resp.Data[0].Embedding)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %w", executor.ErrUpstream, err)
	}
	return vec, usageTotal(resp.Usage), uint64(lim.read.Load()), nil
}

// Quantize converts a float embedding to the verifier's fixed point: the
// vector is scaled to unit length (cosine similarity does not change) and
// each component x becomes round_half_even(x · 2^verify.EmbeddingFracBits),
// so every component lies within ±2^16, inside verify's ±2^20 bound. A zero
// or non-finite vector is refused.
func Quantize(v []float32) ([]int32, error) {
	var norm float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, errors.New("embedding has a non-finite component")
		}
		norm += f * f
	}
	if norm == 0 {
		return nil, errors.New("embedding is the zero vector")
	}
	norm = math.Sqrt(norm)
	scale := float64(int64(1) << verify.EmbeddingFracBits)
	out := make([]int32, len(v))
	nonZero := false
	for i, x := range v {
		q := math.RoundToEven(float64(x) / norm * scale)
		out[i] = int32(q)
		nonZero = nonZero || q != 0
	}
	if !nonZero {
		return nil, errors.New("embedding quantises to zero")
	}
	return out, nil
}

// --- response byte bound ---

// bodyLimit bounds and counts the response bytes of one upstream call; it
// travels in the request context to limitTransport.
type bodyLimit struct {
	max      int64
	read     atomic.Int64
	exceeded atomic.Bool
	// notText is set, with the checker's error in textErr, when a 2xx
	// body holds bytes that are not UTF-8 or lone surrogate escapes:
	// go-openai's JSON decoding would turn them into U+FFFD, and neither
	// the result nor the garbage check would ever see them.
	notText atomic.Bool
	textErr error // written before notText is set
}

// textFault is the call's ErrNotUTF8 failure, or nil.
func (l *bodyLimit) textFault() error {
	if !l.notText.Load() {
		return nil
	}
	return fmt.Errorf("%w: response: %w", executor.ErrUpstream, l.textErr)
}

type bodyLimitKey struct{}

func withBodyLimit(ctx context.Context, l *bodyLimit) context.Context {
	return context.WithValue(ctx, bodyLimitKey{}, l)
}

// errBodyLimit ends a response body that passed its bound.
var errBodyLimit = errors.New("response body exceeds the job's byte bound")

// limitTransport wraps response bodies with the call's bodyLimit, so neither
// a huge JSON response nor an endless stream is read past the job's bound.
type limitTransport struct{ next http.RoundTripper }

func (t *limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if l, ok := r.Context().Value(bodyLimitKey{}).(*bodyLimit); ok && l != nil {
		lb := &limitedBody{rc: resp.Body, l: l}
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			lb.text = new(executor.TextChecker)
		}
		resp.Body = lb
	}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	l    *bodyLimit
	text *executor.TextChecker // nil: not checked (error responses)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	remain := b.l.max - b.l.read.Load()
	if remain <= 0 {
		// Probe one byte: a body of exactly max bytes is fine.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.l.exceeded.Store(true)
			return 0, errBodyLimit
		}
		return 0, err
	}
	if int64(len(p)) > remain {
		p = p[:remain]
	}
	n, err := b.rc.Read(p)
	b.l.read.Add(int64(n))
	if b.text != nil {
		_, terr := b.text.Write(p[:n])
		if terr == nil && errors.Is(err, io.EOF) {
			terr = b.text.Close()
		}
		if terr != nil {
			if !b.l.notText.Load() {
				b.l.textErr = terr
				b.l.notText.Store(true)
			}
			return 0, terr
		}
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
