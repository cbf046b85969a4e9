package standin

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestServeStandalone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, addr) }()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = "http://" + addr + "/v1"
	c := openai.NewClientWithConfig(cfg)
	var models openai.ModelsList
	for i := 0; ; i++ {
		if models, err = c.ListModels(context.Background()); err == nil {
			break
		}
		if i > 100 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(models.Models) != 1 || models.Models[0].ID != DefaultModel || models.Models[0].OwnedBy != "cowboy-local-standin" {
		t.Fatalf("models %+v", models.Models)
	}
	resp, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    DefaultModel,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "what is 6 x 7"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != TextPrefix+"The answer is 42." || resp.SystemFingerprint != Fingerprint {
		t.Fatalf("answer %q fingerprint %q", got, resp.SystemFingerprint)
	}
	// base64 embeddings decode to the same vector as floats.
	for _, f := range []openai.EmbeddingEncodingFormat{openai.EmbeddingEncodingFormatFloat, openai.EmbeddingEncodingFormatBase64} {
		er, err := c.CreateEmbeddings(context.Background(), openai.EmbeddingRequest{Input: []string{"hello world"}, Model: DefaultModel, EncodingFormat: f, Dimensions: 8})
		if err != nil {
			t.Fatal(err)
		}
		want := Embed("hello world", 8)
		for i, x := range er.Data[0].Embedding {
			if x != want[i] {
				t.Fatalf("%s: embedding %v, want %v", f, er.Data[0].Embedding, want)
			}
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWireErrors(t *testing.T) {
	s := New(Options{})
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"model":"gpt-4","messages":[{"role":"user","content":"x"}]}`, 404, "model_not_found"},
		{`{"model":"` + DefaultModel + `","messages":[]}`, 400, "invalid_request"},
		{`{"model":`, 400, "invalid_json"},
		{`{"model":"` + DefaultModel + `","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}}`, 400, "invalid_request"},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(c.body)))
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if rec.Code != c.status || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Code != c.code {
			t.Errorf("%s: %d %s", c.body, rec.Code, rec.Body.String())
		}
	}
	// The instance generator honours enum, bounds and nesting.
	var schema map[string]any
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"label":{"enum":["a","positive"]},"n":{"type":"integer","minimum":5},"tags":{"type":"array","items":{"type":"string","maxLength":3},"minItems":2}}}`), &schema)
	b, _ := json.Marshal(instance(schema, "I love it", 0))
	if string(b) != `{"label":"positive","n":5,"tags":["loc","loc"]}` {
		t.Fatalf("instance %s", b)
	}
	if _, err := respond(&chatRequest{ResponseFormat: &responseFormat{Type: "xml"}}); err == nil {
		t.Fatal("unknown response format accepted")
	}
}
