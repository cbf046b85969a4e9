package jsoncanon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// The decoded-document model the chain's Result Verifier inspects results
// with (chain/offchain/verify): Parse keeps numbers as their exact text,
// Lookup follows JSON Pointers, EqualityKey is vote equality.

// Parse decodes one JSON document with numbers kept as json.Number (exact
// text), rejecting trailing data.
func Parse(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON document")
	}
	if err := bounded(v, 0); err != nil {
		return nil, err
	}
	return v, nil
}

// bounded rejects documents beyond the limits above.
func bounded(v any, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("JSON nested deeper than %d", MaxDepth)
	}
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if len(s) > MaxNumberBytes {
			return fmt.Errorf("JSON number longer than %d bytes", MaxNumberBytes)
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
			if err != nil || e > MaxExponent || e < -MaxExponent {
				return fmt.Errorf("JSON number exponent beyond ±%d", MaxExponent)
			}
		}
	case []any:
		for _, e := range x {
			if err := bounded(e, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := bounded(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// Lookup resolves an RFC 6901 JSON Pointer ("/a/0/b", "~1" = "/", "~0" = "~").
func Lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Rat returns v as an exact rational if it is a JSON number.
func Rat(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	return r, ok
}

// EqualityKey renders a decoded JSON value (from Parse) as the string the
// Result Verifier compares votes by — consensus data, so its rules never
// change: object keys sorted bytewise, no whitespace, strings in Go's JSON
// escaping, and numbers as their exact rational value (big.Rat.RatString, so
// 1, 1.0 and 10e-1 are equal). Two values are equal iff their canonical
// strings are.
func EqualityKey(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		if r, ok := Rat(x); ok {
			b.WriteString("#" + r.RatString())
		} else {
			b.WriteString("#?" + string(x))
		}
	case string:
		s, _ := json.Marshal(x)
		b.Write(s)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			s, _ := json.Marshal(k)
			b.Write(s)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	}
}
