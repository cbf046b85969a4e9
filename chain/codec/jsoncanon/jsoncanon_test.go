package jsoncanon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCanonicalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b": 1, "a": [true, false, null]}`, `{"a":[true,false,null],"b":1}`},
		{` "x\u0041\/<>&\u00e9" `, `"xA/<>&é"`},
		{`"\u0001\n\t"`, `"\u0001\n\t"`},
		{`{"é":1,"z":2,"A":3}`, `{"A":3,"z":2,"é":1}`},
		{`[1.0, 10e-1, 100, 1e2, -0, 0.0, 1.50]`, `[1,1,100,100,0,0,1.5]`},
		{`[1e21, 1e22, 123456789012345678901, 1e20, 0.000001, 0.0000001, 12.5e-3]`, `[1e+21,1e+22,123456789012345678901,100000000000000000000,0.000001,1e-7,0.0125]`},
		{`[-1.25E+3, 3.14159, 1e-400]`, `[-1250,3.14159,1e-400]`},
		{`{"nested":{"z":{"y":[{"b":2,"a":1}]}}}`, `{"nested":{"z":{"y":[{"a":1,"b":2}]}}}`},
	}
	for _, c := range cases {
		got, err := Canonicalize([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
		again, err := Canonicalize(got)
		if err != nil || string(again) != string(got) {
			t.Errorf("not idempotent: %s -> %s (%v)", got, again, err)
		}
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	bad := []string{
		``, `{`, `{"a":1,"a":2}`, `[1] [2]`, `nan`, "\"\xff\"", `1e401`,
		strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2),
		"1" + strings.Repeat("0", MaxNumberBytes),
	}
	for _, b := range bad {
		if _, err := Canonicalize([]byte(b)); !errors.Is(err, ErrNotJSON) {
			t.Errorf("%q: err = %v, want ErrNotJSON", b, err)
		}
	}
}

func TestNumberRejects(t *testing.T) {
	for _, n := range []string{"", "-", ".5", "1.", "1e", "0x10", "1e+x"} {
		if _, err := Number(n); err == nil {
			t.Errorf("Number(%q) accepted", n)
		}
	}
}

func FuzzCanonicalize(f *testing.F) {
	f.Add([]byte(`{"b":[1.50,"x"],"a":{"c":null}}`))
	f.Add([]byte(`[1e-7, -0.0, 12345678901234567890123]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, err := Canonicalize(doc)
		if err != nil {
			return
		}
		again, err := Canonicalize(got)
		if err != nil || string(again) != string(got) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", doc, got, again, err)
		}
	})
}

func TestDecodeStrict(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	if err := DecodeStrict([]byte(` {"a": 1} `), &v); err != nil || v.A != 1 {
		t.Fatalf("%v %+v", err, v)
	}
	for _, bad := range []string{`{"a":1,"b":2}`, `{"a":1} {}`, `{"a":"x"}`, ``} {
		if err := DecodeStrict([]byte(bad), &v); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzAgainstReference checks the one-pass parser against the token-stream
// reference: same acceptance, same bytes.
func FuzzAgainstReference(f *testing.F) {
	for _, s := range []string{
		`{"b":[1.50,"x\u00e9\ud83d\ude00"],"a":{"c":null,"b":true}}`, `[1e-7, -0.0, 12345678901234567890123]`,
		`"\ud800x"`, `"\ud800\u0041"`, `{"a":1,"a":2}`, `[01]`, `[1.]`, `[-]`, `{"a" 1}`, `[1,]`, `"\x"`, " \t\n[] ",
		`{"z":1,"y":{"b":2,"a":[3,{"d":4,"c":5}]}}`, `"a\u0000b"`, `tru`, `nul`, `[1e400]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, err := Canonicalize(doc)
		want, werr := refCanonicalize(doc)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: parser err %v, reference err %v", doc, err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q: parser %q, reference %q", doc, got, want)
		}
	})
}

func benchDoc() []byte {
	var b strings.Builder
	b.WriteString(`{"tickers":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"symbol":"T%03d","price":%d.%02d,"volume":%d,"name":"Ticker \u00e9 %d","tags":["a","b"],"active":true}`, i, 100+i, i, i*1000, i)
	}
	b.WriteString(`],"source":"bench","ts":1700000000}`)
	return []byte(b.String())
}

// BenchmarkCanonicalize compares the one-pass parser with the token-stream
// reference and with a plain encoding/json decode of the same document.
func BenchmarkCanonicalize(b *testing.B) {
	doc := benchDoc()
	b.Run("parser", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := Canonicalize(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := refCanonicalize(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
