// Package jsoncanon is Cowboy's one canonical-JSON package. It owns the
// decoded-document model the Result Verifier judges results with (Parse,
// Lookup, EqualityKey; document.go) and the canonical JSON form runners
// commit for JSON results, so that committee members whose services returned the same JSON
// value sign the same bytes even when the services formatted it differently
// (key order, whitespace, escapes, "1.0" vs "1").
//
// The canonical form is valid JSON: object members sorted by the UTF-8 bytes
// of their keys, no insignificant whitespace, strings escaped minimally
// (only '"', '\\' and control characters; "\b\f\n\r\t" short forms, other
// controls as \u00XX lower-case hex; no HTML escaping), and numbers written
// from their exact decimal value — never through a float — in the shortest
// form: integers without exponent up to 21 digits, "0.000001"-style
// fractions down to 10^-6, otherwise d.ddde±N. Documents deeper than
// MaxDepth, numbers longer than MaxNumberBytes or with an exponent beyond
// ±MaxExponent, invalid UTF-8, duplicate keys and trailing data are refused.
package jsoncanon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on JSON documents, the same for the chain's verifier (Parse) and
// the runners' canonical form, so that a canonicalised result is never one
// the verifier refuses for its shape. They keep exact arithmetic cheap:
// big.Rat of "1e999999" alone costs ~50 ms.
const (
	MaxDepth       = 64  // nesting of arrays/objects
	MaxNumberBytes = 100 // length of a number's text
	MaxExponent    = 400 // |exponent| of a number
)

// ErrNotJSON wraps every rejection.
var ErrNotJSON = errors.New("not canonicalisable JSON")

// Canonicalize parses one JSON document (RFC 8259) and returns its
// canonical form. It is a single pass over the bytes; objects whose keys
// arrive out of order are re-sorted in place.
func Canonicalize(doc []byte) ([]byte, error) {
	if !utf8.Valid(doc) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrNotJSON)
	}
	p := parser{in: doc, out: make([]byte, 0, len(doc))}
	p.space()
	if err := p.value(0); err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.in) {
		return nil, fmt.Errorf("%w: trailing data after the document at byte %d", ErrNotJSON, p.i)
	}
	return p.out, nil
}

// Marshal encodes v with encoding/json and canonicalises the result.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	return Canonicalize(raw)
}

// appendString appends the canonical encoding of s.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// Number returns the canonical text of a JSON number literal: its exact
// decimal value with trailing zeros removed, "-0" as "0", plain notation when
// the decimal point falls within 21 digits of the first digit and at most 6
// zeros after the point, otherwise one digit, '.', the rest and e±N.
func Number(lit string) (string, error) {
	if len(lit) == 0 || len(lit) > MaxNumberBytes {
		return "", fmt.Errorf("%w: number literal of %d bytes (limit %d)", ErrNotJSON, len(lit), MaxNumberBytes)
	}
	s := lit
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(strings.TrimPrefix(expPart, "+"))
		if err != nil || e > MaxExponent || e < -MaxExponent {
			return "", fmt.Errorf("%w: number %q: exponent beyond ±%d", ErrNotJSON, lit, MaxExponent)
		}
		exp = e
	}
	intPart, frac, hasDot := strings.Cut(mant, ".")
	digits := intPart + frac
	if intPart == "" || (hasDot && frac == "") || strings.Trim(digits, "0123456789") != "" {
		return "", fmt.Errorf("%w: number %q", ErrNotJSON, lit)
	}
	exp -= len(frac)
	// value = digits × 10^exp; normalise digits to no leading/trailing zeros.
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0", nil
	}
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	n := len(digits)
	p := n + exp // position of the decimal point counted from the first digit
	var out strings.Builder
	if neg {
		out.WriteByte('-')
	}
	switch {
	case exp >= 0 && p <= 21:
		out.WriteString(digits)
		out.WriteString(strings.Repeat("0", exp))
	case p > 0 && p <= 21:
		out.WriteString(digits[:p])
		out.WriteByte('.')
		out.WriteString(digits[p:])
	case p <= 0 && p > -6:
		out.WriteString("0.")
		out.WriteString(strings.Repeat("0", -p))
		out.WriteString(digits)
	default:
		out.WriteByte(digits[0])
		if n > 1 {
			out.WriteByte('.')
			out.WriteString(digits[1:])
		}
		e := p - 1
		out.WriteByte('e')
		if e >= 0 {
			out.WriteByte('+')
		}
		out.WriteString(strconv.Itoa(e))
	}
	return out.String(), nil
}

// DecodeStrict decodes exactly one JSON document from raw into v, refusing
// unknown object fields and trailing data: job inputs are decoded this way so
// that a misspelt field is an error instead of silently changing the work.
func DecodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON document")
	}
	return nil
}
