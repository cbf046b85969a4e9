package httpx

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// TestInvalidUTF8 (issue 19, defect 3): bytes that are not UTF-8, and JSON
// escapes of lone surrogates, were silently replaced with U+FFFD, so the
// committed result differed from the source while passing every check.
// Text and JSON results now refuse them (ErrUpstream + ErrNotUTF8, an
// external fault); binary results carry the bytes as received.
func TestInvalidUTF8(t *testing.T) {
	bodies := map[string]struct{ ct, body string }{
		"/bad.json":       {"application/json", "{\"p\":\"a\xffb\"}"},
		"/surrogate.json": {"application/json", `{"p":"a\ud800b"}`},
		"/good.json":      {"application/json", `{"p":"a\ud83d\ude00b\ufffd"}`},
		"/bad.html":       {"text/html", "<html><body><div id=t>x \xff\xfe y</div>Price: \xff\xfe1</body></html>"},
		"/bad-sjis.txt":   {"text/plain; charset=shift_jis", "ok \x82\xa0 then \x82\xff"},
		"/good-sjis.txt":  {"text/plain; charset=shift_jis", "ok \x82\xa0"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", b.ct)
		w.Write([]byte(b.body))
	}))
	defer srv.Close()
	e := newExec(t, Config{AllowPrivate: true})
	in := func(path, rules string) string {
		if rules == "" {
			return srv.URL + path
		}
		return fmt.Sprintf(`{"url": %q, "extract": %s}`, srv.URL+path, rules)
	}
	const (
		jsonpath = `[{"kind":"jsonpath","query":"$.p"}]`
		css      = `[{"kind":"css","query":"#t"}]`
		regex    = `[{"kind":"regex","query":"Price: (..)"}]`
	)
	for _, c := range []struct {
		name   string
		input  string
		format job.DataFormatKind
		want   string // "" = refused as not UTF-8
	}{
		{"json body with a bad byte", in("/bad.json", ""), job.FormatJSON, ""},
		{"json body with a lone surrogate", in("/surrogate.json", ""), job.FormatJSON, ""},
		{"jsonpath over a bad byte", in("/bad.json", jsonpath), job.FormatJSON, ""},
		{"jsonpath over a lone surrogate", in("/surrogate.json", jsonpath), job.FormatText, ""},
		{"css text with bad bytes, json", in("/bad.html", css), job.FormatJSON, ""},
		{"css text with bad bytes, text", in("/bad.html", css), job.FormatText, ""},
		{"regex over bad bytes, text", in("/bad.html", regex), job.FormatText, ""},
		{"regex over bad bytes, binary: carried as is", in("/bad.html", regex), job.FormatBinary, "\xff\xfe"},
		{"binary body: carried as is", in("/bad.json", ""), job.FormatBinary, "{\"p\":\"a\xffb\"}"},
		{"text body invalid in its charset", in("/bad-sjis.txt", ""), job.FormatText, ""},
		{"text body valid in its charset", in("/good-sjis.txt", ""), job.FormatText, "ok あ"},
		{"escaped pair and U+FFFD are text", in("/good.json", jsonpath), job.FormatText, "a😀b\ufffd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, e, httpSpec(c.input, c.format))
			if c.want != "" {
				if err != nil || out != c.want {
					t.Fatalf("got %q %v, want %q", out, err, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted as %q (U+FFFD in it: %v)", out, bytes.ContainsRune([]byte(out), '\ufffd'))
			}
			if !errors.Is(err, executor.ErrUpstream) || !errors.Is(err, executor.ErrNotUTF8) {
				t.Fatalf("want ErrUpstream and ErrNotUTF8, got %v", err)
			}
		})
	}
}
