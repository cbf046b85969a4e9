package httpx

import (
	"bytes"
	"testing"
)

// FuzzParseInput: no input panics the parser, and whatever it accepts is
// runnable — only http(s) sources with a host, within the limits.
func FuzzParseInput(f *testing.F) {
	for _, s := range []string{
		`http://127.0.0.1/x`,
		`{"url":"https://api.example.com/p","extract":[{"kind":"jsonpath","query":"$.a[?(@.b>1)].c","name":"c","as":"number"}]}`,
		`{"sources":["http://a/","http://b/"],"snapshot":"median","extract":[{"kind":"css","query":"div.p > span","attr":"title"}]}`,
		`{"url":"http://a/","extract":[{"kind":"xpath","query":"//a/@href","all":true}],"max_age_seconds":5}`,
		`{"url":"http://a/","method":"POST","body":"x","headers":{"X-A":"b"},"extract":[{"kind":"regex","query":"(a)(b)","group":2}]}`,
		`{"url":"http://a/","extract":[{"kind":"jsonpath","query":"$.v","name":"v"},{"kind":"jsonpath","query":"$.t","name":"t"}],"timestamp_field":"t","snapshot":"latest","field":"v"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := parseInput(raw)
		if err != nil {
			return
		}
		if len(p.sources) == 0 || len(p.sources) > MaxSources || len(p.rules) > MaxRules {
			t.Fatalf("accepted %d sources, %d rules", len(p.sources), len(p.rules))
		}
		for _, u := range p.sources {
			if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
				t.Fatalf("accepted source %q", u)
			}
		}
		if p.minValid < 1 || p.minValid > len(p.sources) {
			t.Fatalf("min_valid %d of %d", p.minValid, len(p.sources))
		}
	})
}

// FuzzExtract: extraction over arbitrary bodies never panics, and canonical
// JSON is a fixed point (re-decoding and re-encoding gives the same bytes).
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`{"a":[{"b":2,"c":"x"},{"b":0.5,"c":"y"}],"t":"<p>"}`))
	f.Add([]byte(pageHTML))
	f.Add([]byte(`<a href="1">x</a><a>y</a><div><span class="p">1,2</span></div>`))
	f.Add([]byte("\xff\x00<x"))
	p, err := parseInput([]byte(`{"url":"http://a/","extract":[
		{"kind":"jsonpath","query":"$..b","name":"j","all":true,"optional":true},
		{"kind":"jsonpath","query":"$.a[?(@.b > 1)].c","name":"f","optional":true,"as":"string"},
		{"kind":"css","query":"a, span.p","name":"c","all":true,"optional":true},
		{"kind":"css","query":"a","attr":"href","name":"h","optional":true,"as":"number"},
		{"kind":"xpath","query":"//a/text()","name":"x","all":true,"optional":true},
		{"kind":"xpath","query":"count(//*)","name":"n","optional":true},
		{"kind":"regex","query":"([0-9]+)","name":"r","all":true,"optional":true}]}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := p.extract(&document{body: body})
		if err != nil {
			return // a conversion ("as") may fail on odd input; it must not panic
		}
		out, err := canonicalJSON(v)
		if err != nil {
			return // e.g. a number beyond the canonical form's limits
		}
		back, err := decodeJSON(out)
		if err != nil {
			t.Fatalf("canonical output %q does not parse: %v", out, err)
		}
		if again, err := canonicalJSON(back); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point:\n%s\n%s (%v)", out, again, err)
		}
	})
}
