package jsoncanon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// refCanonicalize is the first implementation, on encoding/json's token
// stream: slow but obviously right, kept as the oracle of the fuzz test.
func refCanonicalize(doc []byte) ([]byte, error) {
	if !utf8.Valid(doc) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrNotJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var b bytes.Buffer
	if err := refWriteValue(&b, dec, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: trailing data after the document", ErrNotJSON)
	}
	return b.Bytes(), nil
}

// refWriteValue reads one value from dec through the token stream (so duplicate
// keys are seen, which decoding into a map would hide) and writes it.
func refWriteValue(b *bytes.Buffer, dec *json.Decoder, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrNotJSON, MaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := refWriteValue(b, dec, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("%w: %w", ErrNotJSON, err)
			}
			b.WriteByte(']')
		case '{':
			type member struct {
				key string
				val []byte
			}
			var ms []member
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("%w: %w", ErrNotJSON, err)
				}
				k, ok := kt.(string)
				if !ok {
					return fmt.Errorf("%w: object key is not a string", ErrNotJSON)
				}
				var vb bytes.Buffer
				if err := refWriteValue(&vb, dec, depth+1); err != nil {
					return err
				}
				ms = append(ms, member{k, vb.Bytes()})
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("%w: %w", ErrNotJSON, err)
			}
			slices.SortFunc(ms, func(x, y member) int { return strings.Compare(x.key, y.key) })
			b.WriteByte('{')
			for i, m := range ms {
				if i > 0 {
					if ms[i-1].key == m.key {
						return fmt.Errorf("%w: duplicate key %q", ErrNotJSON, m.key)
					}
					b.WriteByte(',')
				}
				b.Write(appendString(nil, m.key))
				b.WriteByte(':')
				b.Write(m.val)
			}
			b.WriteByte('}')
		default:
			return fmt.Errorf("%w: unexpected %v", ErrNotJSON, t)
		}
	case string:
		b.Write(appendString(nil, t))
	case json.Number:
		s, err := Number(string(t))
		if err != nil {
			return err
		}
		b.WriteString(s)
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("%w: unexpected token %T", ErrNotJSON, tok)
	}
	return nil
}
