package llm

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// The daemon reads Config from TOML; the documented example must decode.
func TestConfigTOML(t *testing.T) {
	const doc = `
[[models]]
name = "llama3"
base_url = "http://127.0.0.1:8000/v1"
api_key = "k"
upstream_model = "meta-llama/Meta-Llama-3.1-8B-Instruct"
max_tokens = 2048
embeddings_model = "nomic-embed-text"
max_completion_tokens_field = true
strict_schema = true
fixed_sampling = true
`
	var c Config
	dec := toml.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	m := c.Models[0]
	if m.Name != "llama3" || m.upstream() != "meta-llama/Meta-Llama-3.1-8B-Instruct" || m.MaxTokens != 2048 ||
		m.EmbeddingsModel != "nomic-embed-text" || !m.MaxCompletionTokensField || !m.StrictSchema || !m.FixedSampling || m.APIKey != "k" {
		t.Fatalf("%+v", m)
	}
	if _, err := New(c); err != nil {
		t.Fatal(err)
	}
}
