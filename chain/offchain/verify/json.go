package verify

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

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// parseJSON decodes one JSON document with numbers kept as json.Number (exact
// text), rejecting trailing data.
func parseJSON(b []byte) (any, error) {
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

// Limits on JSON documents the chain inspects (results and schemas). They
// keep exact arithmetic cheap: big.Rat of "1e999999" alone costs ~50 ms.
const (
	MaxJSONDepth       = 64  // nesting of arrays/objects
	MaxJSONNumberBytes = 100 // length of a number's text
	MaxJSONExponent    = 400 // |exponent| of a number
)

// bounded rejects documents beyond the limits above.
func bounded(v any, depth int) error {
	if depth > MaxJSONDepth {
		return fmt.Errorf("JSON nested deeper than %d", MaxJSONDepth)
	}
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if len(s) > MaxJSONNumberBytes {
			return fmt.Errorf("JSON number longer than %d bytes", MaxJSONNumberBytes)
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
			if err != nil || e > MaxJSONExponent || e < -MaxJSONExponent {
				return fmt.Errorf("JSON number exponent beyond ±%d", MaxJSONExponent)
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

// lookup resolves an RFC 6901 JSON Pointer ("/a/0/b", "~1" = "/", "~0" = "~").
func lookup(doc any, ptr string) (any, bool) {
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

// number returns v as an exact rational if it is a JSON number.
func number(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	return r, ok
}

// canonical renders a decoded JSON value as a canonical string used for
// equality: object keys sorted bytewise, no whitespace, strings in Go's JSON
// escaping, and numbers as their exact rational value (big.Rat.RatString, so
// 1, 1.0 and 10e-1 are equal). Two values are equal iff their canonical
// strings are.
func canonical(v any) string {
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
		if r, ok := number(x); ok {
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

// schemaURL is the in-memory location every job schema is compiled under.
const schemaURL = "cowboy:///result-schema.json"

// compileSchema compiles a JSON Schema document. Remote and file references
// are refused (the loader knows no scheme), format and content keywords are
// annotations only (the 2020-12 default), and the default draft is pinned to
// 2020-12 so a library upgrade cannot change verdicts of schemas without
// "$schema". Numbers are compared by the library as big.Rat; pattern uses
// Go's RE2 regexp (linear time).
func compileSchema(schema []byte) (*jsonschema.Schema, error) {
	doc, err := parseJSON(schema) // json.Number values, bounded like results
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}
