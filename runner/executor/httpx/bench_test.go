package httpx

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec/jsoncanon"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// benchPages returns a ~6 KB JSON price list and a ~14 KB HTML table of the
// same 100 tickers.
func benchPages() (jsonPage, htmlPage string) {
	var j, h strings.Builder
	j.WriteString(`{"source":"bench","tickers":[`)
	h.WriteString(`<html><head><title>Tickers</title></head><body><table id="t">`)
	for i := range 100 {
		if i > 0 {
			j.WriteByte(',')
		}
		fmt.Fprintf(&j, `{"symbol":"T%03d","price":%d.%02d,"volume":%d}`, i, 100+i, i, 1000*i)
		fmt.Fprintf(&h, `<tr class="row"><td class="sym">T%03d</td><td class="price">$%d.%02d</td><td>%d</td></tr>`, i, 100+i, i, 1000*i)
	}
	j.WriteString(`]}`)
	h.WriteString(`</table><p>Updated: 2026-11-22</p></body></html>`)
	return j.String(), h.String()
}

func benchServer(b *testing.B) *httptest.Server {
	jp, hp := benchPages()
	mux := http.NewServeMux()
	mux.HandleFunc("/p.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jp)
	})
	mux.HandleFunc("/price", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"symbol": "CBY", "price": 1234.50, "ts": 1795348800}`)
	})
	mux.HandleFunc("/p.html", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, hp)
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkJobs compares a whole HTTP job through the executor (policy,
// capped read, extraction, canonical JSON) with a plain net/http GET and
// read of the same page over the same kind of keep-alive connection: a
// 55-byte price quote (the oracle example's shape) and a 6 KB price list.
func BenchmarkJobs(b *testing.B) {
	srv := benchServer(b)
	for _, page := range []string{"/price", "/p.json"} {
		b.Run("baseline_plain_get"+strings.ReplaceAll(page, "/", "_"), func(b *testing.B) {
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
			defer c.CloseIdleConnections()
			for b.Loop() {
				resp, err := c.Get(srv.URL + page)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadAll(resp.Body); err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
	e, err := New(Config{AllowPrivate: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, c := range []struct{ name, input string }{
		{"executor_oracle_price", srv.URL + "/price"},
		{"executor_plain_url", srv.URL + "/p.json"},
		{"executor_jsonpath", fmt.Sprintf(`{"url":%q,"extract":[{"kind":"jsonpath","query":"$.tickers[?(@.symbol == 'T042')].price","name":"price"}]}`, srv.URL+"/p.json")},
		{"executor_css", fmt.Sprintf(`{"url":%q,"extract":[{"kind":"css","query":"tr.row:nth-child(43) td.price","name":"price","as":"number"}]}`, srv.URL+"/p.html")},
		{"executor_median_3_sources", fmt.Sprintf(`{"sources":[%q,%q,%q],"extract":[{"kind":"jsonpath","query":"$.tickers[42].price"}],"snapshot":"median"}`, srv.URL+"/p.json", srv.URL+"/p.json", srv.URL+"/p.json")},
	} {
		spec := &job.JobSpec{
			JobType:         job.JobTypeHTTP,
			Bounds:          job.ResourceBounds{MaxWallTimeMs: 5000, MaxMemoryBytes: 1 << 20},
			ResultSchema:    job.ResultSchema{MaxReturnBytes: 64 << 10, ExpectedExecutionMs: 1000, DataFormat: job.FormatJSON},
			RequiredDomains: []string{"127.0.0.1"},
			Input:           []byte(c.input),
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Execute(context.Background(), executor.Request{Spec: spec}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJobsParallel is BenchmarkJobs with 16 jobs in flight per CPU:
// the executor's sustained throughput against the same for plain GETs.
func BenchmarkJobsParallel(b *testing.B) {
	srv := benchServer(b)
	b.Run("baseline_plain_get", func(b *testing.B) {
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		defer c.CloseIdleConnections()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := c.Get(srv.URL + "/p.json")
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	})
	e, err := New(Config{AllowPrivate: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	spec := &job.JobSpec{
		JobType:         job.JobTypeHTTP,
		Bounds:          job.ResourceBounds{MaxWallTimeMs: 5000, MaxMemoryBytes: 1 << 20},
		ResultSchema:    job.ResultSchema{MaxReturnBytes: 64 << 10, ExpectedExecutionMs: 1000, DataFormat: job.FormatJSON},
		RequiredDomains: []string{"127.0.0.1"},
		Input:           []byte(fmt.Sprintf(`{"url":%q,"extract":[{"kind":"jsonpath","query":"$.tickers[42].price","name":"price"}]}`, srv.URL+"/p.json")),
	}
	b.Run("executor_jsonpath", func(b *testing.B) {
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := e.Execute(context.Background(), executor.Request{Spec: spec}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkExtract measures each extraction kind on an in-memory page,
// parsing included (a document is parsed once per job), against the
// baseline of only parsing that page.
func BenchmarkExtract(b *testing.B) {
	jp, hp := benchPages()
	b.Run("baseline_parse_json", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeJSON([]byte(jp)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline_parse_html", func(b *testing.B) {
		for b.Loop() {
			d := &document{body: []byte(hp)}
			if _, err := d.html(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("none_canonical_json", func(b *testing.B) {
		for b.Loop() {
			if _, err := jsoncanon.Canonicalize([]byte(jp)); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct{ name, body, rules string }{
		{"jsonpath", jp, `[{"kind":"jsonpath","query":"$.tickers[?(@.symbol == 'T042')].price"}]`},
		{"css", hp, `[{"kind":"css","query":"tr.row:nth-child(43) td.price","as":"number"}]`},
		{"xpath", hp, `[{"kind":"xpath","query":"//tr[td[@class='sym']='T042']/td[@class='price']","as":"number"}]`},
		{"regex", hp, `[{"kind":"regex","query":"T042</td><td class=\"price\">\\$([0-9.]+)","as":"number"}]`},
	} {
		input := `{"url":"http://x/","extract":` + c.rules + `}`
		p, err := parseInput([]byte(input))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			var out []byte
			for b.Loop() {
				v, err := p.extract(&document{body: []byte(c.body)})
				if err != nil {
					b.Fatal(err)
				}
				if out, err = canonicalJSON(v); err != nil {
					b.Fatal(err)
				}
			}
			if string(out) != `142.42` && string(out) != `[142.42]` {
				b.Fatalf("extracted %s", out)
			}
		})
	}
}
