package llm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// rawChatServer answers chat completions with content spliced into the JSON
// as raw bytes, plain or streamed in two chunks split at split, so a test
// controls exactly what is on the wire.
func rawChatServer(t *testing.T, content string, split int) *Executor {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		usage := `"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}`
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}],%s}`, content, usage)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range []string{content[:split], content[split:]} {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\n\n", part)
		}
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],%s}\n\ndata: [DONE]\n\n", usage)
	}))
	t.Cleanup(hs.Close)
	ex, err := New(Config{Models: []ModelConfig{{Name: "chat", BaseURL: hs.URL + "/v1", UpstreamModel: "m"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	return ex
}

// TestInvalidUTF8Refused (issue 19, defect 3): go-openai decodes the
// response JSON, which turns bytes that are not UTF-8 (and lone surrogate
// escapes) into U+FFFD; the result then differed from what the server sent
// and the garbage check ("no invalid UTF-8") never saw the bad bytes. Such
// a response is now refused as an upstream fault (ErrNotUTF8), streamed or
// not; text that legitimately holds U+FFFD or an escaped pair passes.
func TestInvalidUTF8Refused(t *testing.T) {
	for _, c := range []struct {
		name, content string
		split         int
		format        job.DataFormatKind
		want          string // "" = refused; "stream only": refused when streamed, else whole and valid
	}{
		{"bad byte", "caf\xe9 ok", 3, job.FormatText, ""},
		{"rune split across stream chunks", "smile \xf0\x9f\x98\x80 ok", 8, job.FormatText, "stream only"},
		{"lone surrogate escape", `a \ud800 b`, 2, job.FormatText, ""},
		{"lone surrogate inside model JSON", `{\"a\":\"\\ud800\"}`, 1, job.FormatJSON, ""},
		{"escaped pair and U+FFFD are text", "a \\ud83d\\ude00 \xef\xbf\xbd b", 2, job.FormatText, "a 😀 \ufffd b"},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", c.name, stream), func(t *testing.T) {
				ex := rawChatServer(t, c.content, c.split)
				in := `{"model":"chat","prompt":"hi"}`
				if stream {
					in = `{"model":"chat","prompt":"hi","stream":true}`
				}
				res, err := executor.NewRegistry(ex).Execute(t.Context(), executor.Request{Spec: spec(in, c.format, 100)})
				if c.want == "stream only" && !stream {
					if err != nil || !strings.Contains(string(res.Output), "😀") {
						t.Fatalf("whole rune: %q %v", res.Output, err)
					}
					return
				}
				if c.want != "" && c.want != "stream only" {
					if err != nil || string(res.Output) != c.want {
						t.Fatalf("got %q %v, want %q", res.Output, err, c.want)
					}
					return
				}
				if err == nil {
					t.Fatalf("accepted %q", res.Output)
				}
				if !errors.Is(err, executor.ErrUpstream) || !errors.Is(err, executor.ErrNotUTF8) {
					t.Fatalf("want ErrUpstream and ErrNotUTF8, got %v", err)
				}
			})
		}
	}
}
