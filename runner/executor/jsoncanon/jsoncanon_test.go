package jsoncanon

import (
	"errors"
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
