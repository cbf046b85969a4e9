package llm

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/codec/jsoncanon"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// Input is the job input of an LLM job (JobSpec.Input), a JSON object:
//
//	{
//	  "model": "llama-3.1-8b",            // required: a model the runner serves
//	  "system": "You are terse.",         // optional system message, sent first
//	  "prompt": "Classify: I love it",    // a single user message, or …
//	  "messages": [{"role": "user", "content": "…"}], // … a conversation (not both)
//	  "temperature": 0,                   // 0..2, default 0
//	  "top_p": 1,                         // (0, 1], default: server's
//	  "seed": 42,                         // default: derived from the job id
//	  "max_tokens": 256,                  // completion tokens, default: the job's bound
//	  "stop": ["\n\n"],                   // up to 4 stop sequences
//	  "stream": false,                    // stream the completion (same result)
//	  "embed": {"model": "llama-3.1-8b"}  // semantic_similarity only: whose embeddings
//	}
//
// Unknown fields are refused, so a typo never silently changes the work.
type Input struct {
	Model       string        `json:"model"`
	System      string        `json:"system,omitempty"`
	Prompt      string        `json:"prompt,omitempty"`
	Messages    []Message     `json:"messages,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	TopP        *float64      `json:"top_p,omitempty"`
	Seed        *int64        `json:"seed,omitempty"`
	MaxTokens   uint64        `json:"max_tokens,omitempty"`
	Stop        []string      `json:"stop,omitempty"`
	Stream      bool          `json:"stream,omitempty"`
	Embed       *EmbedOptions `json:"embed,omitempty"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// EmbedOptions choose the embeddings of a semantic-similarity job: Model
// names a configured model whose embeddings_model embeds the completion;
// default the job's own model. Committee members must use the same
// embeddings model for their vectors to be comparable, so a job should name
// one explicitly when models may be configured differently.
type EmbedOptions struct {
	Model string `json:"model,omitempty"`
}

// Limits on the input beyond JobSpec's 64 KiB.
const (
	maxMessages = 256
	maxStops    = 4
)

// ParseInput decodes and checks an LLM job input.
func ParseInput(raw []byte) (*Input, error) {
	if len(raw) == 0 {
		return nil, errors.New("input is empty; want a JSON object with model and prompt or messages")
	}
	if !utf8.Valid(raw) {
		return nil, errors.New("input is not UTF-8")
	}
	var in Input
	if err := jsoncanon.DecodeStrict(raw, &in); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if in.Model == "" {
		return nil, errors.New("input: model is required")
	}
	if (in.Prompt == "") == (len(in.Messages) == 0) {
		return nil, errors.New("input: set exactly one of prompt and messages")
	}
	if len(in.Messages) > maxMessages {
		return nil, fmt.Errorf("input: %d messages, limit %d", len(in.Messages), maxMessages)
	}
	for i, m := range in.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant":
		default:
			return nil, fmt.Errorf("input: messages[%d].role %q is not system, developer, user or assistant", i, m.Role)
		}
	}
	if t := in.Temperature; t != nil && (*t < 0 || *t > 2) {
		return nil, fmt.Errorf("input: temperature %v outside 0..2", *t)
	}
	if p := in.TopP; p != nil && (*p <= 0 || *p > 1) {
		return nil, fmt.Errorf("input: top_p %v outside (0, 1]", *p)
	}
	if len(in.Stop) > maxStops {
		return nil, fmt.Errorf("input: %d stop sequences, limit %d", len(in.Stop), maxStops)
	}
	return &in, nil
}

// chatMessages is the conversation sent upstream: system, then messages or
// the prompt as one user message.
func (in *Input) chatMessages() []Message {
	var out []Message
	if in.System != "" {
		out = append(out, Message{Role: "system", Content: in.System})
	}
	if in.Prompt != "" {
		return append(out, Message{Role: "user", Content: in.Prompt})
	}
	return append(out, in.Messages...)
}

// expandVolumes substitutes input volume files into the system prompt, the
// prompt and every message (executor.ExpandVolumes).
func (in *Input) expandVolumes(files []executor.VolumeFile) error {
	var err error
	if in.System, err = executor.ExpandVolumes(in.System, files); err != nil {
		return err
	}
	if in.Prompt, err = executor.ExpandVolumes(in.Prompt, files); err != nil {
		return err
	}
	for i := range in.Messages {
		if in.Messages[i].Content, err = executor.ExpandVolumes(in.Messages[i].Content, files); err != nil {
			return err
		}
	}
	return nil
}
