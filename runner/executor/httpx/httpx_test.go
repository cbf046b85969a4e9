package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

const pageHTML = `<!doctype html>
<html><head><title>Quotes</title></head>
<body>
  <div id="t">  Hello
     world  </div>
  <span class="price">$1,234.50</span>
  <ul><li>one</li><li>two</li><li>three</li></ul>
  <a class="more" href="/next?page=2">next</a>
  <p>Price: $99.95 (updated)</p>
</body></html>`

// testServer serves the pages the tests fetch. now is the server's notion of
// the current time for timestamps it reports.
func testServer(t *testing.T, now time.Time) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/price.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{ "price": 1234.50, "symbol": "CBY",
			"items": [ {"n": "a", "v": 1}, {"n": "b", "v": 2}, {"n": "c", "v": 3} ],
			"obj": {"z": 1, "a": 2, "m": 3}, "ts": %d, "big": 123456789012345678901234567890 }`, now.Unix())
	})
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, pageHTML)
	})
	mux.HandleFunc("/n/{v}", func(w http.ResponseWriter, r *http.Request) {
		// A numeric feed: {"value": v, "ts": now - age} with ?age=seconds.
		age, _ := strconv.Atoi(r.URL.Query().Get("age"))
		fmt.Fprintf(w, `{"value": %s, "ts": %d}`, r.PathValue("v"), now.Add(-time.Duration(age)*time.Second).Unix())
	})
	mux.HandleFunc("/label/{v}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"label": %q}`, r.PathValue("v"))
	})
	mux.HandleFunc("/modified", func(w http.ResponseWriter, r *http.Request) {
		age, _ := strconv.Atoi(r.URL.Query().Get("age"))
		w.Header().Set("Last-Modified", now.Add(-time.Duration(age)*time.Second).UTC().Format(http.TimeFormat))
		fmt.Fprint(w, `{"ok": true}`)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		chunk := strings.Repeat("x", 1024)
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write([]byte(chunk[:k])); err != nil {
				return
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			n -= k
		}
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "  plain text body\n")
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
		w.Write([]byte("<p>caf\xe9</p>"))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		fmt.Fprintf(&b, `{"method": %q, "ua": %q, "x": %q, "body": `, r.Method, r.UserAgent(), r.Header.Get("X-Test"))
		body := make([]byte, 1024)
		n, _ := r.Body.Read(body)
		fmt.Fprintf(&b, "%q}", body[:n])
		fmt.Fprint(w, b.String())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func newExec(t testing.TB, cfg Config) *Executor {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.now = func() time.Time { return testNow }
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func httpSpec(input string, format job.DataFormatKind, domains ...string) *job.JobSpec {
	if domains == nil {
		domains = []string{"127.0.0.1"}
	}
	return &job.JobSpec{
		JobType:         job.JobTypeHTTP,
		Bounds:          job.ResourceBounds{MaxWallTimeMs: 5000, MaxMemoryBytes: 1 << 20},
		ResultSchema:    job.ResultSchema{MaxReturnBytes: 4096, ExpectedExecutionMs: 1000, DataFormat: format},
		RequiredDomains: domains,
		Input:           []byte(input),
	}
}

func run(t *testing.T, e *Executor, spec *job.JobSpec) (string, error) {
	t.Helper()
	res, err := e.Execute(context.Background(), executor.Request{Spec: spec})
	return string(res.Output), err
}

func mustRun(t *testing.T, e *Executor, spec *job.JobSpec) string {
	t.Helper()
	out, err := run(t, e, spec)
	if err != nil {
		t.Fatalf("execute %s: %v", spec.Input, err)
	}
	return out
}

func TestPlainURLCanonicalJSON(t *testing.T) {
	srv := testServer(t, testNow)
	e := newExec(t, Config{AllowPrivate: true})
	out := mustRun(t, e, httpSpec(srv.URL+"/price.json", job.FormatJSON))
	want := fmt.Sprintf(`{"big":1.2345678901234567890123456789e+29,"items":[{"n":"a","v":1},{"n":"b","v":2},{"n":"c","v":3}],"obj":{"a":2,"m":3,"z":1},"price":1234.5,"symbol":"CBY","ts":%d}`, testNow.Unix())
	if out != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	// The same page through a JSON input object gives the same bytes.
	if out2 := mustRun(t, e, httpSpec(`{"url": "`+srv.URL+`/price.json"}`, job.FormatJSON)); out2 != want {
		t.Fatalf("input object: %s", out2)
	}
}

func TestExtraction(t *testing.T) {
	srv := testServer(t, testNow)
	e := newExec(t, Config{AllowPrivate: true})
	j := srv.URL + "/price.json"
	h := srv.URL + "/page.html"
	cases := []struct {
		name, url, rules, want string
	}{
		{"jsonpath scalar", j, `[{"kind":"jsonpath","query":"$.price"}]`, `1234.5`},
		{"jsonpath big number exact", j, `[{"kind":"jsonpath","query":"$.big"}]`, `1.2345678901234567890123456789e+29`},
		{"jsonpath filter", j, `[{"kind":"jsonpath","query":"$.items[?(@.v > 1)].n"}]`, `"b"`},
		{"jsonpath all", j, `[{"kind":"jsonpath","query":"$.items[*].v","all":true}]`, `[1,2,3]`},
		{"jsonpath object wildcard ordered by key", j, `[{"kind":"jsonpath","query":"$.obj.*","all":true}]`, `[2,3,1]`},
		{"jsonpath root", j, `[{"kind":"jsonpath","query":"$","name":"doc"}]`, `{"doc":{"big":1.2345678901234567890123456789e+29,"items":[{"n":"a","v":1},{"n":"b","v":2},{"n":"c","v":3}],"obj":{"a":2,"m":3,"z":1},"price":1234.5,"symbol":"CBY","ts":` + strconv.FormatInt(testNow.Unix(), 10) + `}}`},
		{"jsonpath without root", j, `[{"kind":"jsonpath","query":"symbol"}]`, `"CBY"`},
		{"jsonpath object value", j, `[{"kind":"jsonpath","query":"$.obj"}]`, `{"a":2,"m":3,"z":1}`},
		{"jsonpath bracket child", j, `[{"kind":"jsonpath","query":"$['items'][1]['n']"}]`, `"b"`},
		{"jsonpath slice", j, `[{"kind":"jsonpath","query":"$.items[1:].v","all":true}]`, `[2,3]`},
		{"jsonpath descent", j, `[{"kind":"jsonpath","query":"$..n","all":true}]`, `["a","b","c"]`},
		{"jsonpath as string", j, `[{"kind":"jsonpath","query":"$.price","as":"string"}]`, `"1234.50"`},
		{"jsonpath as number", j, `[{"kind":"jsonpath","query":"$.price","as":"number"}]`, `1234.5`},
		{"jsonpath optional missing", j, `[{"kind":"jsonpath","query":"$.nope","name":"x","optional":true}]`, `{"x":null}`},
		{"css text collapsed", h, `[{"kind":"css","query":"#t"}]`, `"Hello world"`},
		{"css as number", h, `[{"kind":"css","query":"span.price","as":"number"}]`, `1234.5`},
		{"css attr", h, `[{"kind":"css","query":"a.more","attr":"href"}]`, `"/next?page=2"`},
		{"css all", h, `[{"kind":"css","query":"ul > li","all":true}]`, `["one","two","three"]`},
		{"css group", h, `[{"kind":"css","query":"title, #t","all":true}]`, `["Quotes","Hello world"]`},
		{"xpath text", h, `[{"kind":"xpath","query":"//div[@id='t']"}]`, `"Hello world"`},
		{"xpath attr", h, `[{"kind":"xpath","query":"//a","attr":"href"}]`, `"/next?page=2"`},
		{"xpath attribute node", h, `[{"kind":"xpath","query":"//a/@href"}]`, `"/next?page=2"`},
		{"xpath count", h, `[{"kind":"xpath","query":"count(//li)"}]`, `3`},
		{"xpath all", h, `[{"kind":"xpath","query":"//li/text()","all":true}]`, `["one","two","three"]`},
		{"xpath string function", h, `[{"kind":"xpath","query":"string(//title)"}]`, `"Quotes"`},
		{"regex group", h, `[{"kind":"regex","query":"Price: \\$([0-9.]+)"}]`, `"99.95"`},
		{"regex group as number", h, `[{"kind":"regex","query":"Price: \\$([0-9.]+)","as":"number"}]`, `99.95`},
		{"regex whole match", h, `[{"kind":"regex","query":"t[a-z]o"}]`, `"two"`},
		{"regex explicit group 0", h, `[{"kind":"regex","query":"Price: \\$([0-9.]+)","group":0}]`, `"Price: $99.95"`},
		{"regex on json", j, `[{"kind":"regex","query":"\"symbol\": \"([A-Z]+)\""}]`, `"CBY"`},
		{"named fields build an object", h,
			`[{"kind":"css","query":"span.price","name":"price","as":"number"},{"kind":"xpath","query":"count(//li)","name":"items"},{"kind":"regex","query":"Price: \\$([0-9.]+)","name":"other"}]`,
			`{"items":3,"other":"99.95","price":1234.5}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := mustRun(t, e, httpSpec(fmt.Sprintf(`{"url": %q, "extract": %s}`, c.url, c.rules), job.FormatJSON))
			if out != c.want {
				t.Fatalf("got %s, want %s", out, c.want)
			}
		})
	}
	// A rule that matches nothing fails the source with a message naming it.
	_, err := run(t, e, httpSpec(fmt.Sprintf(`{"url": %q, "extract": [{"kind":"css","query":"table.nope","name":"tbl"}]}`, h), job.FormatJSON))
	if !errors.Is(err, executor.ErrUpstream) || !strings.Contains(err.Error(), "tbl") || !strings.Contains(err.Error(), "no match") {
		t.Fatalf("no match: %v", err)
	}
	// JSONPath on HTML is a clear error.
	_, err = run(t, e, httpSpec(fmt.Sprintf(`{"url": %q, "extract": [{"kind":"jsonpath","query":"$.a"}]}`, h), job.FormatJSON))
	if err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("jsonpath on html: %v", err)
	}
}

func TestTextFormat(t *testing.T) {
	srv := testServer(t, testNow)
	e := newExec(t, Config{AllowPrivate: true})
	// Without rules a text job returns the body verbatim.
	if out := mustRun(t, e, httpSpec(srv.URL+"/text", job.FormatText)); out != "  plain text body\n" {
		t.Fatalf("raw text: %q", out)
	}
	// With a rule, a string value is returned as text, not JSON.
	out := mustRun(t, e, httpSpec(fmt.Sprintf(`{"url": %q, "extract":[{"kind":"css","query":"title"}]}`, srv.URL+"/page.html"), job.FormatText))
	if out != "Quotes" {
		t.Fatalf("text rule: %q", out)
	}
	// A declared legacy charset is decoded to UTF-8.
	out = mustRun(t, e, httpSpec(fmt.Sprintf(`{"url": %q, "extract":[{"kind":"css","query":"p"}]}`, srv.URL+"/latin1"), job.FormatText))
	if out != "café" {
		t.Fatalf("latin1: %q", out)
	}
	if out := mustRun(t, e, httpSpec(srv.URL+"/latin1", job.FormatBinary)); out != "<p>caf\xe9</p>" {
		t.Fatalf("binary keeps bytes: %q", out)
	}
	// A JSON job over a non-JSON page fails.
	if _, err := run(t, e, httpSpec(srv.URL+"/text", job.FormatJSON)); !errors.Is(err, executor.ErrUpstream) {
		t.Fatalf("json job over text: %v", err)
	}
}

func TestMethodHeadersBody(t *testing.T) {
	srv := testServer(t, testNow)
	e := newExec(t, Config{AllowPrivate: true, UserAgent: "ua-test"})
	out := mustRun(t, e, httpSpec(fmt.Sprintf(`{"url": %q, "method": "post", "headers": {"x-test": "v1"}, "body": "hello"}`, srv.URL+"/echo"), job.FormatJSON))
	if out != `{"body":"hello","method":"POST","ua":"ua-test","x":"v1"}` {
		t.Fatalf("echo: %s", out)
	}
	out = mustRun(t, e, httpSpec(fmt.Sprintf(`{"url": %q, "headers": {"User-Agent": "mine"}}`, srv.URL+"/echo"), job.FormatJSON))
	if out != `{"body":"","method":"GET","ua":"mine","x":""}` {
		t.Fatalf("echo: %s", out)
	}
}

func TestSnapshotModes(t *testing.T) {
	srv := testServer(t, testNow)
	e := newExec(t, Config{AllowPrivate: true})
	u := srv.URL
	value := `"extract":[{"kind":"jsonpath","query":"$.value"}]`
	cases := []struct {
		name, input, want, err string
	}{
		{"first_valid skips failures", fmt.Sprintf(`{"sources":[%q,%q,%q], %s}`, u+"/status/503", u+"/n/7", u+"/n/8", value), `7`, ""},
		{"first_valid all fail", fmt.Sprintf(`{"sources":[%q,%q], %s}`, u+"/status/503", u+"/status/404", value), ``, "0 of 2 sources valid"},
		{"min_valid", fmt.Sprintf(`{"sources":[%q,%q,%q], %s, "min_valid": 3}`, u+"/status/503", u+"/n/7", u+"/n/8", value), ``, "2 of 3 sources valid, need 3"},
		{"median odd", fmt.Sprintf(`{"sources":[%q,%q,%q], %s, "snapshot":"median"}`, u+"/n/10", u+"/n/1.5", u+"/n/3", value), `3`, ""},
		{"median even is exact mean", fmt.Sprintf(`{"sources":[%q,%q,%q,%q], %s, "snapshot":"median"}`, u+"/n/10", u+"/n/1.5", u+"/n/3", u+"/n/4", value), `3.5`, ""},
		{"median ignores failed source", fmt.Sprintf(`{"sources":[%q,%q,%q], %s, "snapshot":"median"}`, u+"/n/2", u+"/status/500", u+"/n/3", value), `2.5`, ""},
		{"median of named field keeps first object", fmt.Sprintf(`{"sources":[%q,%q,%q], "extract":[{"kind":"jsonpath","query":"$.value","name":"price"},{"kind":"jsonpath","query":"$.ts","name":"ts"}], "field":"price", "snapshot":"median"}`, u+"/n/5", u+"/n/1", u+"/n/9"),
			fmt.Sprintf(`{"price":5,"ts":%d}`, testNow.Unix()), ""},
		{"median of numeric strings", fmt.Sprintf(`{"sources":[%q,%q], "extract":[{"kind":"css","query":"span.price"}], "snapshot":"median"}`, u+"/page.html", u+"/page.html"), `1234.5`, ""},
		{"median over non-number", fmt.Sprintf(`{"sources":[%q,%q], "extract":[{"kind":"jsonpath","query":"$.label"}], "snapshot":"median"}`, u+"/label/x", u+"/label/y"), ``, "snapshot median"},
		{"majority", fmt.Sprintf(`{"sources":[%q,%q,%q], "snapshot":"majority"}`, u+"/label/up", u+"/label/down", u+"/label/up"), `{"label":"up"}`, ""},
		{"majority on field", fmt.Sprintf(`{"sources":[%q,%q,%q], "extract":[{"kind":"jsonpath","query":"$.label","name":"l"}], "field":"l", "snapshot":"majority"}`, u+"/label/a", u+"/label/b", u+"/label/b"), `{"l":"b"}`, ""},
		{"majority tie", fmt.Sprintf(`{"sources":[%q,%q], "snapshot":"majority"}`, u+"/label/up", u+"/label/down"), ``, "no value held by more than half"},
		{"latest by timestamp field", fmt.Sprintf(`{"sources":[%q,%q,%q], "extract":[{"kind":"jsonpath","query":"$.value","name":"v"},{"kind":"jsonpath","query":"$.ts","name":"ts"}], "timestamp_field":"ts", "snapshot":"latest"}`, u+"/n/1?age=30", u+"/n/2?age=10", u+"/n/3?age=20"),
			fmt.Sprintf(`{"ts":%d,"v":2}`, testNow.Add(-10*time.Second).Unix()), ""},
		{"latest by Last-Modified", fmt.Sprintf(`{"sources":[%q,%q], "snapshot":"latest", "extract":[{"kind":"regex","query":"ok"}]}`, u+"/modified?age=100", u+"/status/500"), `"ok"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, e, httpSpec(c.input, job.FormatJSON))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("want error %q, got %v (output %s)", c.err, err, out)
				}
				return
			}
			if err != nil || out != c.want {
				t.Fatalf("got %s, %v; want %s", out, err, c.want)
			}
		})
	}
}

func TestFreshness(t *testing.T) {
	srv := testServer(t, testNow)
	e := newExec(t, Config{AllowPrivate: true})
	u := srv.URL
	tsRules := `"extract":[{"kind":"jsonpath","query":"$.value","name":"v"},{"kind":"jsonpath","query":"$.ts","name":"ts"}], "timestamp_field":"ts"`
	cases := []struct {
		name, input, want, err string
	}{
		{"fresh Last-Modified", fmt.Sprintf(`{"url":%q, "max_age_seconds": 60}`, u+"/modified?age=30"), `{"ok":true}`, ""},
		{"stale Last-Modified", fmt.Sprintf(`{"url":%q, "max_age_seconds": 60}`, u+"/modified?age=120"), ``, "max_age_seconds 60"},
		{"fresh timestamp field", fmt.Sprintf(`{"url":%q, %s, "max_age_seconds": 60}`, u+"/n/4?age=59", tsRules), fmt.Sprintf(`{"ts":%d,"v":4}`, testNow.Add(-59*time.Second).Unix()), ""},
		{"stale timestamp field", fmt.Sprintf(`{"url":%q, %s, "max_age_seconds": 60}`, u+"/n/4?age=61", tsRules), ``, "old"},
		{"stale source skipped by first_valid", fmt.Sprintf(`{"sources":[%q,%q], %s, "max_age_seconds": 60}`, u+"/n/1?age=600", u+"/n/2?age=5", tsRules), fmt.Sprintf(`{"ts":%d,"v":2}`, testNow.Add(-5*time.Second).Unix()), ""},
		{"stale sources excluded from median", fmt.Sprintf(`{"sources":[%q,%q,%q], %s, "field":"v", "snapshot":"median", "max_age_seconds": 60}`, u+"/n/100?age=600", u+"/n/2?age=5", u+"/n/4?age=5", tsRules), fmt.Sprintf(`{"ts":%d,"v":3}`, testNow.Add(-5*time.Second).Unix()), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, e, httpSpec(c.input, job.FormatJSON))
			if c.err != "" {
				if !errors.Is(err, executor.ErrUpstream) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("want upstream error %q, got %v (output %s)", c.err, err, out)
				}
				return
			}
			if err != nil || out != c.want {
				t.Fatalf("got %s, %v; want %s", out, err, c.want)
			}
		})
	}
	// Date header: httptest's real clock is "now", so with the executor's
	// clock moved an hour on, the page is an hour old.
	e2 := newExec(t, Config{AllowPrivate: true})
	e2.now = func() time.Time { return time.Now().Add(time.Hour) }
	if _, err := run(t, e2, httpSpec(fmt.Sprintf(`{"url":%q, "max_age_seconds": 60}`, u+"/label/x"), job.FormatJSON)); err == nil || !strings.Contains(err.Error(), "old") {
		t.Fatalf("stale Date header: %v", err)
	}
	e2.now = time.Now
	if _, err := run(t, e2, httpSpec(fmt.Sprintf(`{"url":%q, "max_age_seconds": 60}`, u+"/label/x"), job.FormatJSON)); err != nil {
		t.Fatalf("fresh Date header: %v", err)
	}
}

func TestParseTimestamp(t *testing.T) {
	want := time.Unix(1_700_000_000, 0)
	for _, v := range []any{jsonNum("1700000000"), jsonNum("1700000000000"), "1700000000", "2023-11-14T22:13:20Z", "Tue, 14 Nov 2023 22:13:20 GMT"} {
		got, err := parseTimestamp(v)
		if err != nil || !got.Equal(want) {
			t.Errorf("%v: got %v, %v", v, got, err)
		}
	}
	for _, v := range []any{nil, true, "yesterday", jsonNum("-5"), jsonNum("1e300")} {
		if _, err := parseTimestamp(v); err == nil {
			t.Errorf("%v: accepted", v)
		}
	}
}

func TestSizeCaps(t *testing.T) {
	srv := testServer(t, testNow)
	u := srv.URL
	e := newExec(t, Config{AllowPrivate: true, MaxResponseBytes: 64 << 10})
	for _, q := range []string{"", "&chunked=1"} {
		// Within the runner cap.
		spec := httpSpec(fmt.Sprintf(`{"url":%q, "extract":[{"kind":"regex","query":"^x{3}"}]}`, u+"/big?n=60000"+q), job.FormatJSON)
		res, err := e.Execute(context.Background(), executor.Request{Spec: spec})
		if err != nil || string(res.Output) != `"xxx"` {
			t.Fatalf("60000 bytes%s: %s, %v", q, res.Output, err)
		}
		if res.Usage.MemoryBytes != 60000 || res.Usage.WallTimeMs == 0 {
			t.Fatalf("usage %+v", res.Usage)
		}
		// Over the runner cap.
		_, err = run(t, e, httpSpec(u+"/big?n=70000"+q, job.FormatText))
		if !errors.Is(err, executor.ErrBoundExceeded) {
			t.Fatalf("70000 bytes%s: %v", q, err)
		}
		// The job's max_memory_bytes lowers the cap.
		spec = httpSpec(u+"/big?n=20000"+q, job.FormatText)
		spec.Bounds.MaxMemoryBytes = 10000
		if _, err := run(t, e, spec); !errors.Is(err, executor.ErrBoundExceeded) {
			t.Fatalf("max_memory_bytes%s: %v", q, err)
		}
	}
	// The memory bound covers all sources together.
	spec := httpSpec(fmt.Sprintf(`{"sources":[%q,%q], "min_valid": 2}`, u+"/big?n=6000", u+"/big?n=6000"), job.FormatText)
	spec.Bounds.MaxMemoryBytes = 10000
	if _, err := run(t, e, spec); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("total budget: %v", err)
	}
	// A result larger than max_return_bytes is refused.
	spec = httpSpec(u+"/big?n=5000", job.FormatText)
	if _, err := run(t, e, spec); !errors.Is(err, executor.ErrBoundExceeded) || !strings.Contains(err.Error(), "max_return_bytes") {
		t.Fatalf("max_return_bytes: %v", err)
	}
}

func TestDomainPolicy(t *testing.T) {
	srv := testServer(t, testNow)
	port := srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndexByte(port, ':')+1:]
	local := "http://localhost:" + port
	ip := "http://127.0.0.1:" + port
	cases := []struct {
		name    string
		cfg     Config
		input   string
		domains []string
		want    error // nil: success
		msg     string
	}{
		{"job declares the host", Config{AllowPrivate: true}, ip + "/text", []string{"127.0.0.1"}, nil, ""},
		{"job does not declare the host", Config{AllowPrivate: true}, ip + "/text", []string{"localhost"}, executor.ErrBadInput, "required_domains"},
		{"job declares nothing", Config{AllowPrivate: true}, ip + "/text", []string{}, executor.ErrBadInput, "declares no required_domains"},
		{"runner allowlist refuses", Config{AllowPrivate: true, AllowedDomains: []string{"localhost"}}, ip + "/text", []string{"127.0.0.1"}, executor.ErrRefused, "allowed_domains"},
		{"runner allowlist admits", Config{AllowPrivate: true, AllowedDomains: []string{"localhost", "127.0.0.1"}}, local + "/text", []string{"localhost"}, nil, ""},
		{"wildcard admits subdomain only", Config{AllowPrivate: true}, local + "/text", []string{"*.localhost"}, executor.ErrBadInput, "required_domains"},
		{"curated set in job", Config{AllowPrivate: true, DomainSets: map[string][]string{"price_feeds": {"localhost"}}}, local + "/text", []string{"set:price_feeds"}, nil, ""},
		{"curated set in allowlist", Config{AllowPrivate: true, AllowedDomains: []string{"set:price_feeds"}, DomainSets: map[string][]string{"price_feeds": {"127.0.0.1"}}}, ip + "/text", []string{"127.0.0.1"}, nil, ""},
		{"unknown set", Config{AllowPrivate: true}, ip + "/text", []string{"set:nope"}, executor.ErrRefused, "unknown domain set"},
		{"host case", Config{AllowPrivate: true}, "http://LocalHost:" + port + "/text", []string{"localhost."}, nil, ""},
		{"redirect to undeclared host", Config{AllowPrivate: true}, local + "/redirect?to=" + ip + "/text", []string{"localhost"}, executor.ErrBadInput, "redirect to"},
		{"redirect to host the runner refuses", Config{AllowPrivate: true, AllowedDomains: []string{"localhost"}}, local + "/redirect?to=" + ip + "/text", []string{"127.0.0.1", "localhost"}, executor.ErrRefused, "redirect to"},
		{"redirect within the allowlist", Config{AllowPrivate: true}, local + "/redirect?to=" + ip + "/text", []string{"127.0.0.1", "localhost"}, nil, ""},
		{"too many redirects", Config{AllowPrivate: true, MaxRedirects: -1}, local + "/redirect?to=/text", []string{"localhost"}, executor.ErrUpstream, "redirects"},
		// allow_private=false: localhost resolves to 127.0.0.1 and is refused
		// at dial time, whatever the name. The host is the job's choice, so
		// it is the job's fault (committed as an ActorFault report), not a
		// refusal by this runner's own policy.
		{"private name refused", Config{}, local + "/text", []string{"localhost"}, ErrNotPublic, "not public"},
		{"private literal refused", Config{}, ip + "/text", []string{"127.0.0.1"}, executor.ErrBadInput, "not public"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newExec(t, c.cfg)
			_, err := run(t, e, httpSpec(c.input, job.FormatText, c.domains...))
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("want %v containing %q, got %v", c.want, c.msg, err)
			}
			if errors.Is(err, ErrNotPublic) && (!errors.Is(err, executor.ErrBadInput) || errors.Is(err, executor.ErrRefused)) {
				t.Fatalf("a non-public target is the job's fault (ErrBadInput), not a runner refusal: %v", err)
			}
		})
	}
}

func TestPublicAddr(t *testing.T) {
	for s, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "0.0.0.0": false, "255.255.255.255": false,
		"::1": false, "fe80::1": false, "fd00::1": false, "::ffff:127.0.0.1": false,
		"::ffff:8.8.8.8": true, "64:ff9b::a00:1": false, "224.0.0.1": false, "::": false,
	} {
		if got := publicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("%s: got %v", s, got)
		}
	}
}

func TestHangingServerBoundedByWallTime(t *testing.T) {
	srv := testServer(t, testNow)
	e := newExec(t, Config{AllowPrivate: true})
	spec := httpSpec(srv.URL+"/hang", job.FormatJSON)
	spec.Bounds.MaxWallTimeMs = 300
	reg := executor.NewRegistry(e)
	start := time.Now()
	_, err := reg.Execute(context.Background(), executor.Request{Spec: spec})
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %s", el)
	}
	if !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("hang: %v", err)
	}
	// first_valid stops waiting once an earlier source is valid.
	spec = httpSpec(fmt.Sprintf(`{"sources":[%q,%q]}`, srv.URL+"/label/a", srv.URL+"/hang"), job.FormatJSON)
	start = time.Now()
	if out, err := run(t, e, spec); err != nil || out != `{"label":"a"}` || time.Since(start) > 2*time.Second {
		t.Fatalf("first_valid with a hanging later source: %s, %v after %s", out, err, time.Since(start))
	}
	// A hanging source among several fails alone; the rest still combine
	// within the job's wall time.
	spec = httpSpec(fmt.Sprintf(`{"sources":[%q,%q,%q], "snapshot":"median", "extract":[{"kind":"jsonpath","query":"$.value"}]}`,
		srv.URL+"/n/1", srv.URL+"/hang", srv.URL+"/n/2"), job.FormatJSON)
	spec.Bounds.MaxWallTimeMs = 800
	start = time.Now()
	res, err := reg.Execute(context.Background(), executor.Request{Spec: spec})
	if err != nil || string(res.Output) != `1.5` || time.Since(start) > 2*time.Second {
		t.Fatalf("median with a hanging source: %s, %v after %s", res.Output, err, time.Since(start))
	}
	// A cancelled (not timed out) job is not reported as a bound.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	spec = httpSpec(srv.URL+"/hang", job.FormatJSON)
	_, err = e.Execute(ctx, executor.Request{Spec: spec})
	if err == nil || errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("cancel: %v", err)
	}
}

func TestMalformedInput(t *testing.T) {
	e := newExec(t, Config{AllowPrivate: true})
	for _, in := range []string{
		``,
		`   `,
		`ftp://127.0.0.1/x`,
		`not a url`,
		`http://user:pw@127.0.0.1/`,
		`{`,
		`{"url": 5}`,
		`{"url": "http://127.0.0.1/"} trailing`,
		`{"url": "http://127.0.0.1/"}}`,
		`{"unknown": 1, "url": "http://127.0.0.1/"}`,
		`{}`,
		`{"url": "http://127.0.0.1/", "sources": ["http://127.0.0.1/"]}`,
		`{"url": "http://127.0.0.1/", "method": "DELETE"}`,
		`{"url": "http://127.0.0.1/", "body": "x"}`,
		`{"url": "http://127.0.0.1/", "headers": {"Host": "evil"}}`,
		`{"url": "http://127.0.0.1/", "headers": {"bad name": "x"}}`,
		`{"url": "http://127.0.0.1/", "headers": {"X": "a\r\nB: c"}}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "sql", "query": "x"}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "jsonpath", "query": ""}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "jsonpath", "query": "$[?(@.a =="}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "css", "query": "div["}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "xpath", "query": "//div["}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "regex", "query": "("}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "regex", "query": "a", "group": 1}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "css", "query": "a", "group": 0}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "jsonpath", "query": "$.a", "attr": "x"}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "jsonpath", "query": "$.a", "as": "date"}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "jsonpath", "query": "$.a"}, {"kind": "jsonpath", "query": "$.b"}]}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "jsonpath", "query": "$.a", "name": "x"}, {"kind": "jsonpath", "query": "$.b", "name": "x"}]}`,
		`{"url": "http://127.0.0.1/", "snapshot": "mean"}`,
		`{"url": "http://127.0.0.1/", "field": "x"}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "jsonpath", "query": "$.a", "name": "x"}], "field": "y"}`,
		`{"url": "http://127.0.0.1/", "extract": [{"kind": "jsonpath", "query": "$.a", "name": "x"}], "snapshot": "median"}`,
		`{"url": "http://127.0.0.1/", "timestamp_field": "ts"}`,
		`{"url": "http://127.0.0.1/", "max_age_seconds": -1}`,
		`{"url": "http://127.0.0.1/", "min_valid": 2}`,
		`{"url": "http://127.0.0.1/` + strings.Repeat("a", MaxURLBytes) + `"}`,
		`{"sources": [` + strings.Repeat(`"http://127.0.0.1/",`, MaxSources) + `"http://127.0.0.1/"]}`,
		"\xff\xfe",
	} {
		_, err := run(t, e, httpSpec(in, job.FormatJSON))
		if !errors.Is(err, executor.ErrBadInput) {
			t.Errorf("%.80q: want ErrBadInput, got %v", in, err)
		}
	}
	// Wrong job type and missing spec.
	spec := httpSpec("http://127.0.0.1/", job.FormatJSON)
	spec.JobType = job.JobTypeLLM
	if _, err := run(t, e, spec); !errors.Is(err, executor.ErrBadInput) {
		t.Errorf("llm job: %v", err)
	}
	if _, err := e.Execute(context.Background(), executor.Request{}); !errors.Is(err, executor.ErrBadInput) {
		t.Errorf("nil spec: %v", err)
	}
}

func TestConfig(t *testing.T) {
	if _, err := New(Config{AllowedDomains: []string{"set:unknown"}}); err == nil {
		t.Error("unknown set in allowlist accepted")
	}
	if _, err := New(Config{AllowedDomains: []string{"a/b"}}); err == nil {
		t.Error("malformed allowlist entry accepted")
	}
	if _, err := New(Config{DomainSets: map[string][]string{"x": {"*."}}}); err == nil {
		t.Error("malformed set member accepted")
	}
	d := Config{AllowedDomains: []string{"API.Example.com.", "set:price_feeds", "*.Foo.org"}}.Domains()
	for _, want := range []string{"api.example.com", "set:price_feeds", "api.kraken.com", "*.foo.org"} {
		found := false
		for _, x := range d {
			found = found || x == want
		}
		if !found {
			t.Errorf("Domains() = %v lacks %s", d, want)
		}
	}
	all := Config{}.Domains()
	for _, s := range []string{"set:price_feeds", "set:government_us", "set:social_apis", "set:blockchain_rpc", "*.gov"} {
		found := false
		for _, x := range all {
			found = found || x == s
		}
		if !found {
			t.Errorf("default Domains() lacks %s", s)
		}
	}
}

func TestNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"$1,234.50": "1234.5", "1234.50 USD": "1234.5", "-0.5": "-0.5", "+7": "7", "3e2": "300",
		"1.5E-3": "0.0015", "Price: 12": "12", "007": "7",
	} {
		r, err := parseNumberText(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if s, _ := decimalString(r); s != want {
			t.Errorf("%q: got %s, want %s", in, s, want)
		}
	}
	for _, in := range []string{"", "n/a", "1 and 2", "1e999", "0x10"} {
		if _, err := parseNumberText(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func jsonNum(s string) json.Number { return json.Number(s) }
