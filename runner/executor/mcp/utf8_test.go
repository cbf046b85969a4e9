package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// rawHTTPServer is a minimal streamable HTTP MCP server whose tools/call
// answers carry text spliced into the JSON as raw bytes.
func rawHTTPServer(t *testing.T, text string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch msg.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`, msg.ID)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"say","inputSchema":{"type":"object"}}]}}`, msg.ID)
		case "tools/call":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, msg.ID, text)
		case "ping":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestInvalidUTF8FromHTTPServer (issue 19, defect 3): the SDK decodes tool
// results with encoding/json, which turns bytes that are not UTF-8 (and
// lone surrogate escapes) into U+FFFD. Over streamable HTTP the executor
// checks the bytes on the wire and fails such a call (ErrUpstream +
// ErrNotUTF8) instead of committing the repaired text.
func TestInvalidUTF8FromHTTPServer(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"bad byte", "caf\xe9", ""},
		{"lone surrogate", `a\ud800b`, ""},
		{"escaped pair and U+FFFD", "a\\ud83d\\ude00\xef\xbf\xbd", "a😀\ufffd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex, err := New(context.Background(), Config{Servers: []ServerConfig{{Name: "raw", URL: rawHTTPServer(t, c.text)}}})
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			res, err := runJob(ex, mcpSpec(`{"server":"raw","tool":"say"}`, job.FormatText))
			if c.want != "" {
				if err != nil || string(res.Output) != c.want {
					t.Fatalf("got %q %v, want %q", res.Output, err, c.want)
				}
				return
			}
			if !errors.Is(err, executor.ErrNotUTF8) || !errors.Is(err, executor.ErrUpstream) {
				t.Fatalf("want ErrUpstream and ErrNotUTF8, got %q %v", res.Output, err)
			}
		})
	}
}

// TestInvalidUTF8FromStdioServer: the same over stdio, where the executor
// checks each JSON-RPC line of the server's stdout; the session stays
// usable afterwards.
func TestInvalidUTF8FromStdioServer(t *testing.T) {
	ex := testServer(t)
	res, err := runJob(ex, mcpSpec(`{"server":"t","tool":"badtext"}`, job.FormatText))
	if !errors.Is(err, executor.ErrNotUTF8) || !errors.Is(err, executor.ErrUpstream) {
		t.Fatalf("want ErrUpstream and ErrNotUTF8, got %q %v", res.Output, err)
	}
	if res, err := runJob(ex, mcpSpec(`{"server":"t","tool":"echo","arguments":{"message":"ok \u00e9"}}`, job.FormatText)); err != nil || string(res.Output) != "Echo: ok é" {
		t.Fatalf("echo after: %q %v", res.Output, err)
	}
}
