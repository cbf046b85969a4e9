package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// envTestServer makes the test binary act as a small stdio MCP server
// (serveTestServer) instead of running tests; the tests start it as a
// real child process with os.Args[0].
const envTestServer = "COWBOY_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(envTestServer) != "" {
		serveTestServer()
		os.Exit(0)
	}
	if os.Getenv(envConformanceClient) != "" {
		os.Exit(conformanceClient())
	}
	os.Exit(m.Run())
}

// testServerConfig is a ServerConfig running this test binary as the
// test server.
func testServerConfig(name string) ServerConfig {
	return ServerConfig{Name: name, Command: os.Args[0], Env: map[string]string{envTestServer: "1"}, HealthTimeoutMs: 500}
}

// serveTestServer speaks line-delimited JSON-RPC on stdin/stdout, as a
// hand-written server can misbehave in ways an SDK server will not:
//
//   - echo {"message"}: answers "Echo: <message>";
//   - sleep {"ms"}: answers after ms while still reading (a slow but
//     healthy server);
//   - wedge: stops reading stdin for good and never answers (a server
//     stuck in a blocking call);
//   - badtext: answers with a byte that is not UTF-8 in its text;
//   - elicit: sends elicitation/create to the client, whether or not it
//     advertised the capability, and reports the answer (or, if none
//     comes within 30 s, nothing: the call hangs).
func serveTestServer() {
	var wmu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	send := func(v any) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = out.Encode(v)
	}
	result := func(id json.RawMessage, v any) { send(map[string]any{"jsonrpc": "2.0", "id": id, "result": v}) }
	text := func(id json.RawMessage, s string, isErr bool) {
		result(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}, "isError": isErr})
	}
	var emu sync.Mutex
	elicits := map[string]chan json.RawMessage{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			continue
		}
		switch msg.Method {
		case "initialize":
			result(msg.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "cowboy-test-server", "version": "1"}})
		case "ping":
			result(msg.ID, map[string]any{})
		case "tools/list":
			obj := map[string]any{"type": "object"}
			var tools []any
			for _, n := range []string{"echo", "sleep", "wedge", "elicit", "badtext"} {
				tools = append(tools, map[string]any{"name": n, "inputSchema": obj})
			}
			result(msg.ID, map[string]any{"tools": tools})
		case "tools/call":
			var args struct {
				Message string `json:"message"`
				Ms      int    `json:"ms"`
			}
			_ = json.Unmarshal(msg.Params.Arguments, &args)
			switch msg.Params.Name {
			case "echo":
				text(msg.ID, "Echo: "+args.Message, false)
			case "sleep":
				go func(id json.RawMessage) {
					time.Sleep(time.Duration(args.Ms) * time.Millisecond)
					text(id, "slept", false)
				}(msg.ID)
			case "badtext":
				// Raw bytes, as encoding/json would never write them.
				wmu.Lock()
				fmt.Fprintf(os.Stdout, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"caf\xe9\"}]}}\n", msg.ID)
				wmu.Unlock()
			case "wedge":
				time.Sleep(time.Hour) // never reads again (select{} would let the runtime kill us)
			case "elicit":
				eid := fmt.Sprintf("elicit-%s", msg.ID)
				ch := make(chan json.RawMessage, 1)
				emu.Lock()
				elicits[`"`+eid+`"`] = ch
				emu.Unlock()
				send(map[string]any{"jsonrpc": "2.0", "id": eid, "method": "elicitation/create",
					"params": map[string]any{"message": "your name?", "requestedSchema": map[string]any{"type": "object",
						"properties": map[string]any{"name": map[string]any{"type": "string"}}}}})
				go func(id json.RawMessage) {
					select {
					case ans := <-ch:
						text(id, "elicitation answered: "+string(ans), false)
					case <-time.After(30 * time.Second):
					}
				}(msg.ID)
			default:
				send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32602, "message": "unknown tool"}})
			}
		case "":
			// A response to one of our requests.
			emu.Lock()
			ch := elicits[string(msg.ID)]
			emu.Unlock()
			if ch != nil {
				ans := msg.Result
				if msg.Error != nil {
					ans = msg.Error
				}
				ch <- ans
			}
		default:
			if msg.ID != nil && msg.Method[:min(len(msg.Method), 14)] != "notifications/" {
				send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
	}
}
