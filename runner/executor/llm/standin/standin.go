// Package standin is a small OpenAI-compatible HTTP server that answers
// deterministically from the prompt. Tests of the LLM executor use it, and so
// does the demo when no real endpoint is configured (COWBOY_LLM_BASE_URL
// unset). It speaks the real wire format — POST /v1/chat/completions (JSON
// and SSE streaming with "data: … [DONE]" and the include_usage chunk), POST
// /v1/embeddings (float and base64), GET /v1/models — and says in its model
// list, its system_fingerprint and its text answers that it is a local
// stand-in, not a language model.
//
// Answers are rule-based: arithmetic questions are computed, sentiment
// questions are classified with a word list, a json_schema response format
// is answered with an instance generated from the schema, json_object with a
// small object, anything else with an acknowledgement quoting the prompt.
// Tokens are whitespace-separated words. Embeddings are hashed
// bag-of-words vectors, so texts sharing words are cosine-similar.
//
// Faults for tests (Fault*) make it hang, return garbage, fail with 500, or
// ignore max_tokens and over-report usage.
package standin

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultModel is the model id served when Options.Models is empty.
const DefaultModel = "cowboy-local-standin"

// Fingerprint is the system_fingerprint of every completion.
const Fingerprint = "cowboy-local-standin-v1"

// TextPrefix starts every free-text answer, so nobody mistakes the demo's
// output for a model's.
const TextPrefix = "[local stand-in, not a language model] "

// Fault selects misbehaviour for fault-injection tests.
type Fault int

// Faults.
const (
	FaultNone Fault = iota
	// FaultHang accepts the request and never answers (until the client
	// gives up or the server shuts down).
	FaultHang
	// FaultGarbage answers 200 with a body that is not JSON (or, when
	// streaming, events that are not JSON).
	FaultGarbage
	// FaultServerError answers 500 with an OpenAI error object.
	FaultServerError
	// FaultOverrun ignores max_tokens: it generates LongAnswerWords words
	// and reports them all in usage.
	FaultOverrun
	// FaultNoUsage omits usage from responses and streams.
	FaultNoUsage
	// FaultFlaky answers every other API request with 503 (overloaded),
	// starting with the first.
	FaultFlaky
)

// LongAnswerWords is how many words FaultOverrun generates.
const LongAnswerWords = 5000

// Options configure a Server. The zero value serves DefaultModel with
// 64-dimensional embeddings and no authentication.
type Options struct {
	// Models are the model ids served (chat and embeddings alike).
	Models []string
	// EmbeddingDim is the default embedding dimension (a request's
	// "dimensions" overrides it). Default 64.
	EmbeddingDim int
	// APIKey, when set, is required as "Authorization: Bearer <key>".
	APIKey string
	// ChunkDelay is slept between streamed chunks.
	ChunkDelay time.Duration
	// Logger receives one line per request; nil discards.
	Logger *slog.Logger
}

// Server is the stand-in. It is safe for concurrent use.
type Server struct {
	opts     Options
	models   map[string]bool
	fault    atomic.Int32
	requests atomic.Int64
	flaky    atomic.Int64
	mux      *http.ServeMux
	hangOnce sync.Once
	stop     chan struct{}
	last     atomic.Pointer[[]byte]
}

// New returns a server with opts.
func New(opts Options) *Server {
	if len(opts.Models) == 0 {
		opts.Models = []string{DefaultModel}
	}
	if opts.EmbeddingDim <= 0 {
		opts.EmbeddingDim = 64
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, models: map[string]bool{}, stop: make(chan struct{})}
	for _, m := range opts.Models {
		s.models[m] = true
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	s.mux.HandleFunc("GET /v1/models", s.listModels)
	return s
}

// SetFault switches the server's behaviour for subsequent requests.
func (s *Server) SetFault(f Fault) { s.fault.Store(int32(f)) }

// Requests is the number of API requests served so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// LastChatRequest returns the body of the most recent chat completion
// request (nil before the first), for tests that check what a client sent.
func (s *Server) LastChatRequest() []byte {
	if p := s.last.Load(); p != nil {
		return *p
	}
	return nil
}

// Release ends every hanging request (FaultHang) so a test server can shut
// down promptly. The server keeps working afterwards, without hangs.
func (s *Server) Release() {
	s.hangOnce.Do(func() { close(s.stop) })
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.opts.Logger.Debug("standin request", "method", r.Method, "path", r.URL.Path)
	if s.opts.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.APIKey {
		apiError(w, http.StatusUnauthorized, "invalid_api_key", "incorrect API key provided to the local stand-in")
		return
	}
	switch Fault(s.fault.Load()) {
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	case FaultServerError:
		apiError(w, http.StatusInternalServerError, "server_error", "local stand-in: injected server error")
		return
	case FaultFlaky:
		if s.flaky.Add(1)%2 == 1 {
			w.Header().Set("Retry-After", "0")
			apiError(w, http.StatusServiceUnavailable, "overloaded", "local stand-in: injected overload, retry")
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// Serve runs a stand-in with default options on addr (e.g.
// "127.0.0.1:11434") until ctx is done, then shuts down gracefully. The
// OpenAI base URL of the result is "http://<addr>/v1".
func Serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("standin: listen %s: %w", addr, err)
	}
	return New(Options{}).ServeListener(ctx, ln)
}

// ServeListener serves on ln until ctx is done, then shuts down gracefully
// (waiting at most five seconds for in-flight requests).
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("standin: serve: %w", err)
	case <-ctx.Done():
	}
	s.Release()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("standin: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("standin: serve: %w", err)
	}
	return nil
}

// --- wire types ---

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text returns the message content, joining the text parts of an array
// content.
func (m message) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict bool            `json:"strict"`
	} `json:"json_schema"`
}

type chatRequest struct {
	Model               string    `json:"model"`
	Messages            []message `json:"messages"`
	MaxTokens           int       `json:"max_tokens"`
	MaxCompletionTokens int       `json:"max_completion_tokens"`
	Temperature         *float64  `json:"temperature"`
	Seed                *int64    `json:"seed"`
	Stream              bool      `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *responseFormat `json:"response_format"`
	Stop           []string        `json:"stop"`
	N              int             `json:"n"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "code": code, "param": nil,
	}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) listModels(w http.ResponseWriter, _ *http.Request) {
	data := make([]map[string]any, 0, len(s.opts.Models))
	for _, m := range s.opts.Models {
		data = append(data, map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "cowboy-local-standin"})
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// completionID is derived from the request so equal requests get equal ids.
func completionID(prefix string, body any) string {
	b, _ := json.Marshal(body)
	h := sha256.Sum256(b)
	return fmt.Sprintf("%s-standin-%x", prefix, h[:8])
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<20))
	if err != nil {
		apiError(w, http.StatusRequestEntityTooLarge, "request_too_large", "local stand-in: "+err.Error())
		return
	}
	s.last.Store(&body)
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_json", "local stand-in: request body is not valid JSON: "+err.Error())
		return
	}
	if !s.models[req.Model] {
		apiError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("local stand-in: the model %q does not exist (served: %s)", req.Model, strings.Join(s.opts.Models, ", ")))
		return
	}
	if len(req.Messages) == 0 {
		apiError(w, http.StatusBadRequest, "invalid_request", "local stand-in: messages must be non-empty")
		return
	}
	if req.N > 1 {
		apiError(w, http.StatusBadRequest, "invalid_request", "local stand-in: n > 1 is not supported")
		return
	}
	fault := Fault(s.fault.Load())
	answer, err := respond(&req)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request", "local stand-in: "+err.Error())
		return
	}
	words := tokens(answer)
	limit := req.MaxTokens
	if req.MaxCompletionTokens > 0 && (limit == 0 || req.MaxCompletionTokens < limit) {
		limit = req.MaxCompletionTokens
	}
	finish := "stop"
	if fault == FaultOverrun {
		for len(words) < LongAnswerWords {
			words = append(words, "more")
		}
	} else if limit > 0 && len(words) > limit {
		words, finish = words[:limit], "length"
	}
	u := usage{PromptTokens: promptTokens(req.Messages), CompletionTokens: len(words)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	id := completionID("chatcmpl", req)
	if req.Stream {
		s.stream(w, r, &req, id, words, finish, u, fault)
		return
	}
	if fault == FaultGarbage {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id": "garbage", "choices": [{"message": {"content": tru`))
		return
	}
	resp := map[string]any{
		"id": id, "object": "chat.completion", "created": 0, "model": req.Model,
		"system_fingerprint": Fingerprint,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": strings.Join(words, " ")},
			"finish_reason": finish,
		}},
	}
	if fault != FaultNoUsage {
		resp["usage"] = u
	}
	writeJSON(w, resp)
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *chatRequest, id string, words []string, finish string, u usage, fault Fault) {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if fault == FaultGarbage {
			b = []byte("{not json at all")
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		if s.opts.ChunkDelay > 0 {
			select {
			case <-time.After(s.opts.ChunkDelay):
			case <-r.Context().Done():
				return false
			}
		}
		return r.Context().Err() == nil
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model,
			"system_fingerprint": Fingerprint,
			"choices":            []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for i, word := range words {
		if i > 0 {
			word = " " + word
		}
		if !send(chunk(map[string]any{"content": word}, nil)) {
			return
		}
	}
	if !send(chunk(map[string]any{}, finish)) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && fault != FaultNoUsage {
		if !send(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model,
			"system_fingerprint": Fingerprint, "choices": []any{}, "usage": u,
		}) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// tokens splits text into the stand-in's tokens: whitespace-separated words.
func tokens(s string) []string { return strings.Fields(s) }

// promptTokens counts words plus a fixed overhead per message, like chat
// templates do.
func promptTokens(ms []message) int {
	n := 3
	for _, m := range ms {
		n += 4 + len(tokens(m.text()))
	}
	return n
}

// respond produces the full answer for req.
func respond(req *chatRequest) (string, error) {
	var last string
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m.text()
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return "", errors.New("response_format json_schema without a schema")
			}
			var schema map[string]any
			if err := json.Unmarshal(rf.JSONSchema.Schema, &schema); err != nil {
				return "", fmt.Errorf("json_schema.schema is not a JSON object: %v", err)
			}
			v := instance(schema, last, 0)
			b, _ := json.MarshalIndent(v, "", "  ") // pretty, like models answer; executors canonicalise
			return string(b), nil
		case "json_object":
			b, _ := json.Marshal(map[string]any{
				"answer":    plainAnswer(last),
				"standin":   true,
				"sentiment": sentiment(last),
			})
			return string(b), nil
		case "text", "":
		default:
			return "", fmt.Errorf("unsupported response_format type %q", rf.Type)
		}
	}
	return TextPrefix + plainAnswer(last), nil
}

// plainAnswer is the rule-based reply to a user message.
func plainAnswer(prompt string) string {
	if v, ok := arithmetic(prompt); ok {
		return "The answer is " + v + "."
	}
	lower := strings.ToLower(prompt)
	if strings.Contains(lower, "sentiment") {
		return "The sentiment is " + sentiment(prompt) + "."
	}
	words := tokens(prompt)
	if len(words) > 12 {
		words = append(words[:12], "…")
	}
	return fmt.Sprintf("You asked: %q (%d words).", strings.Join(words, " "), len(tokens(prompt)))
}

// arithmetic finds "a <op> b" with integers a, b and op in + - * and
// evaluates it.
func arithmetic(prompt string) (string, bool) {
	f := strings.FieldsFunc(prompt, func(r rune) bool { return r == ' ' || r == '?' || r == '=' || r == ',' })
	// Also split "2+3" into "2", "+", "3".
	var toks []string
	for _, w := range f {
		cur := ""
		for _, r := range w {
			if strings.ContainsRune("+-*x×", r) && cur != "" {
				toks = append(toks, cur, string(r))
				cur = ""
				continue
			}
			cur += string(r)
		}
		if cur != "" {
			toks = append(toks, cur)
		}
	}
	for i := 0; i+2 < len(toks); i++ {
		a, err1 := strconv.ParseInt(toks[i], 10, 64)
		b, err2 := strconv.ParseInt(toks[i+2], 10, 64)
		if err1 != nil || err2 != nil || a > 1<<31 || b > 1<<31 || a < -(1<<31) || b < -(1<<31) {
			continue
		}
		switch toks[i+1] {
		case "+", "plus":
			return strconv.FormatInt(a+b, 10), true
		case "-", "minus":
			return strconv.FormatInt(a-b, 10), true
		case "*", "x", "×", "times":
			return strconv.FormatInt(a*b, 10), true
		}
	}
	return "", false
}

var (
	positiveWords = []string{"good", "great", "excellent", "love", "happy", "wonderful", "amazing", "best", "fantastic", "like", "up", "gain", "bull"}
	negativeWords = []string{"bad", "terrible", "awful", "hate", "sad", "worst", "poor", "horrible", "down", "loss", "bear", "crash"}
)

// sentiment classifies by counting words from two lists.
func sentiment(s string) string {
	score := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z')
	}) {
		for _, p := range positiveWords {
			if w == p {
				score++
			}
		}
		for _, n := range negativeWords {
			if w == n {
				score--
			}
		}
	}
	switch {
	case score > 0:
		return "positive"
	case score < 0:
		return "negative"
	}
	return "neutral"
}

// instance generates a value satisfying the common JSON Schema keywords
// (type, enum, const, properties/required, items, minItems, minimum/maximum,
// minLength/maxLength), choosing values from the prompt where it can:
// "sentiment"/"label" strings get the classified sentiment, numbers the
// arithmetic answer.
func instance(schema map[string]any, prompt string, depth int) any {
	if depth > 16 {
		return nil
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		want := sentiment(prompt)
		for _, v := range e {
			if v == want {
				return v
			}
		}
		return e[0]
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := schema[key].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return instance(m, prompt, depth+1)
			}
		}
	}
	typ, _ := schema["type"].(string)
	if ts, ok := schema["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	if typ == "" {
		if _, ok := schema["properties"]; ok {
			typ = "object"
		}
	}
	switch typ {
	case "object":
		props, _ := schema["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		out := map[string]any{}
		for _, k := range names {
			sub, _ := props[k].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
			}
			v := instance(withName(sub, k), prompt, depth+1)
			out[k] = v
		}
		return out
	case "array":
		n := 1
		if m, ok := number(schema["minItems"]); ok && int(m) > n {
			n = int(m)
		}
		if m, ok := number(schema["maxItems"]); ok && int(m) < n {
			n = int(m)
		}
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			items = map[string]any{"type": "string"}
		}
		out := make([]any, n)
		for i := range out {
			out[i] = instance(items, prompt, depth+1)
		}
		return out
	case "integer", "number":
		v := 0.0
		if a, ok := arithmetic(prompt); ok {
			v, _ = strconv.ParseFloat(a, 64)
		}
		if lo, ok := number(schema["minimum"]); ok && v < lo {
			v = math.Ceil(lo)
		}
		if hi, ok := number(schema["maximum"]); ok && v > hi {
			v = math.Floor(hi)
		}
		return v
	case "boolean":
		return true
	case "null":
		return nil
	default: // string
		name, _ := schema["x-standin-name"].(string)
		s := "local stand-in"
		if name == "sentiment" || name == "label" {
			s = sentiment(prompt)
		} else if a, ok := arithmetic(prompt); ok {
			s = a
		}
		if m, ok := number(schema["maxLength"]); ok && len(s) > int(m) {
			s = s[:int(m)]
		}
		if m, ok := number(schema["minLength"]); ok {
			for len(s) < int(m) {
				s += "."
			}
		}
		return s
	}
}

func withName(schema map[string]any, name string) map[string]any {
	out := make(map[string]any, len(schema)+1)
	for k, v := range schema {
		out[k] = v
	}
	out["x-standin-name"] = name
	return out
}

func number(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

// --- embeddings ---

type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     int             `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req embeddingRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_json", "local stand-in: request body is not valid JSON: "+err.Error())
		return
	}
	if !s.models[req.Model] {
		apiError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("local stand-in: the model %q does not exist", req.Model))
		return
	}
	var inputs []string
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request", "local stand-in: input must be a string or an array of strings")
		return
	}
	dim := s.opts.EmbeddingDim
	if req.Dimensions > 0 {
		dim = req.Dimensions
	}
	if dim > 8192 {
		apiError(w, http.StatusBadRequest, "invalid_request", "local stand-in: dimensions above 8192")
		return
	}
	if Fault(s.fault.Load()) == FaultGarbage {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data": [{"embedding": "garb`))
		return
	}
	data := make([]map[string]any, len(inputs))
	total := 0
	for i, in := range inputs {
		vec := Embed(in, dim)
		total += len(tokens(in))
		var emb any = vec
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(vec))
			for j, f := range vec {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	resp := map[string]any{"object": "list", "model": req.Model, "data": data}
	if Fault(s.fault.Load()) != FaultNoUsage {
		resp["usage"] = map[string]any{"prompt_tokens": total, "total_tokens": total}
	}
	writeJSON(w, resp)
}

// Embed is the stand-in's embedding: each lower-cased word adds ±1 at a
// hashed index, and the vector is scaled to unit length. A text without
// words embeds as a unit vector on the first axis.
func Embed(text string, dim int) []float32 {
	v := make([]float64, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(w))
		x := h.Sum64()
		sign := 1.0
		if x&1 == 1 {
			sign = -1
		}
		v[(x>>1)%uint64(dim)] += sign
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dim)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
