package llm

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Config configures the LLM executor. The runner daemon reads it from the
// [executors.llm] table of its TOML config file.
type Config struct {
	// Models are the models this runner serves; a job names one by Name.
	Models []ModelConfig `toml:"models" json:"models"`
	// HTTPClient is used for every upstream call; nil uses a client on a
	// clone of http.DefaultTransport. Its Timeout should be zero: the job's
	// wall-time bound arrives through the context.
	HTTPClient *http.Client `toml:"-" json:"-"`
	// Logger receives one line per job; nil discards.
	Logger *slog.Logger `toml:"-" json:"-"`
}

// ModelConfig is one model behind an OpenAI-compatible endpoint (OpenAI,
// vLLM, llama.cpp server, Ollama's /v1, …).
type ModelConfig struct {
	// Name is the model name jobs use ("model" in the job input).
	Name string `toml:"name" json:"name"`
	// BaseURL is the API root including the version segment, e.g.
	// "https://api.openai.com/v1" or "http://127.0.0.1:8000/v1".
	BaseURL string `toml:"base_url" json:"base_url"`
	// APIKey is sent as a bearer token. Prefer APIKeyEnv, which names an
	// environment variable holding the key, so the config file holds no
	// secret. Local servers usually need neither.
	APIKey    string `toml:"api_key" json:"api_key,omitempty"`
	APIKeyEnv string `toml:"api_key_env" json:"api_key_env,omitempty"`
	// UpstreamModel is the model id sent to the server; default Name.
	UpstreamModel string `toml:"upstream_model" json:"upstream_model,omitempty"`
	// MaxTokens caps the completion tokens this runner requests for any
	// job (0: no cap beyond the job's bound).
	MaxTokens uint64 `toml:"max_tokens" json:"max_tokens,omitempty"`
	// EmbeddingsModel is the upstream embeddings model used for
	// semantic-similarity jobs on this model; empty: this model does not
	// serve semantic-similarity jobs.
	EmbeddingsModel string `toml:"embeddings_model" json:"embeddings_model,omitempty"`
	// MaxCompletionTokensField sends the completion budget as
	// "max_completion_tokens" (needed by OpenAI reasoning models) instead
	// of "max_tokens" (understood by every compatible server).
	MaxCompletionTokensField bool `toml:"max_completion_tokens_field" json:"max_completion_tokens_field,omitempty"`
	// StrictSchema sets "strict": true on json_schema response formats
	// (OpenAI then refuses schemas outside its strict subset).
	StrictSchema bool `toml:"strict_schema" json:"strict_schema,omitempty"`
	// FixedSampling marks a model that accepts no temperature, top_p or
	// seed (OpenAI reasoning models answer 400 to them): none is sent, and
	// a job that sets temperature or top_p is refused.
	FixedSampling bool `toml:"fixed_sampling" json:"fixed_sampling,omitempty"`
}

// apiKey resolves the key: APIKey, else the APIKeyEnv variable.
func (m *ModelConfig) apiKey() (string, error) {
	if m.APIKey != "" {
		return m.APIKey, nil
	}
	if m.APIKeyEnv != "" {
		k, ok := os.LookupEnv(m.APIKeyEnv)
		if !ok || k == "" {
			return "", fmt.Errorf("model %q: api_key_env %s is not set", m.Name, m.APIKeyEnv)
		}
		return k, nil
	}
	return "", nil
}

func (m *ModelConfig) upstream() string {
	if m.UpstreamModel != "" {
		return m.UpstreamModel
	}
	return m.Name
}

func (c *Config) validate() error {
	if len(c.Models) == 0 {
		return fmt.Errorf("llm: config lists no models")
	}
	seen := map[string]bool{}
	for i := range c.Models {
		m := &c.Models[i]
		if m.Name == "" || strings.TrimSpace(m.Name) != m.Name {
			return fmt.Errorf("llm: models[%d]: name must be non-empty without surrounding spaces", i)
		}
		if seen[m.Name] {
			return fmt.Errorf("llm: model %q configured twice", m.Name)
		}
		seen[m.Name] = true
		u, err := url.Parse(m.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("llm: model %q: base_url %q is not an http(s) URL", m.Name, m.BaseURL)
		}
		if m.APIKey != "" && m.APIKeyEnv != "" {
			return fmt.Errorf("llm: model %q: set api_key or api_key_env, not both", m.Name)
		}
	}
	return nil
}
