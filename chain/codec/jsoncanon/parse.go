package jsoncanon

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// parser canonicalises a document in one pass: it validates the grammar and
// appends the canonical form to out.
type parser struct {
	in  []byte
	i   int
	out []byte
	tmp []byte // scratch for re-sorting object members
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", ErrNotJSON, fmt.Sprintf(format, args...), p.i)
}

func (p *parser) space() {
	for p.i < len(p.in) {
		switch p.in[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrNotJSON, MaxDepth)
	}
	if p.i >= len(p.in) {
		return p.errorf("unexpected end of input")
	}
	switch c := p.in[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return err
		}
		p.out = appendString(p.out, s)
		return nil
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.errorf("unexpected character %q", c)
	}
}

func (p *parser) literal(lit string) error {
	if !bytes.HasPrefix(p.in[p.i:], []byte(lit)) {
		return p.errorf("invalid literal")
	}
	p.i += len(lit)
	p.out = append(p.out, lit...)
	return nil
}

func (p *parser) array(depth int) error {
	p.i++ // '['
	p.out = append(p.out, '[')
	p.space()
	if p.i < len(p.in) && p.in[p.i] == ']' {
		p.i++
		p.out = append(p.out, ']')
		return nil
	}
	for {
		p.space()
		if err := p.value(depth + 1); err != nil {
			return err
		}
		p.space()
		if p.i >= len(p.in) {
			return p.errorf("unterminated array")
		}
		switch p.in[p.i] {
		case ',':
			p.i++
			p.out = append(p.out, ',')
		case ']':
			p.i++
			p.out = append(p.out, ']')
			return nil
		default:
			return p.errorf("expected ',' or ']'")
		}
	}
}

// member is one written object member: its decoded key and where its
// canonical "key":value bytes sit in out.
type member struct {
	key        string
	start, end int
}

func (p *parser) object(depth int) error {
	p.i++ // '{'
	p.out = append(p.out, '{')
	base := len(p.out)
	p.space()
	if p.i < len(p.in) && p.in[p.i] == '}' {
		p.i++
		p.out = append(p.out, '}')
		return nil
	}
	var ms []member
	sorted := true
	for {
		p.space()
		if p.i >= len(p.in) || p.in[p.i] != '"' {
			return p.errorf("expected an object key")
		}
		k, err := p.str()
		if err != nil {
			return err
		}
		p.space()
		if p.i >= len(p.in) || p.in[p.i] != ':' {
			return p.errorf("expected ':'")
		}
		p.i++
		p.space()
		start := len(p.out)
		p.out = appendString(p.out, k)
		p.out = append(p.out, ':')
		if err := p.value(depth + 1); err != nil {
			return err
		}
		if n := len(ms); n > 0 && ms[n-1].key >= k {
			sorted = false
		}
		ms = append(ms, member{k, start, len(p.out)})
		p.space()
		if p.i >= len(p.in) {
			return p.errorf("unterminated object")
		}
		if p.in[p.i] == '}' {
			p.i++
			break
		}
		if p.in[p.i] != ',' {
			return p.errorf("expected ',' or '}'")
		}
		p.i++
		p.out = append(p.out, ',')
	}
	if !sorted {
		slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		for j := 1; j < len(ms); j++ {
			if ms[j-1].key == ms[j].key {
				return fmt.Errorf("%w: duplicate key %q", ErrNotJSON, ms[j].key)
			}
		}
		p.tmp = p.tmp[:0]
		for j, m := range ms {
			if j > 0 {
				p.tmp = append(p.tmp, ',')
			}
			p.tmp = append(p.tmp, p.out[m.start:m.end]...)
		}
		p.out = append(p.out[:base], p.tmp...)
	}
	p.out = append(p.out, '}')
	return nil
}

// str decodes the string literal at p.i (which is '"').
func (p *parser) str() (string, error) {
	p.i++
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.in) {
		c := p.in[p.i]
		if c == '"' {
			s := string(p.in[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errorf("control character in string")
		}
		p.i++
	}
	buf := append([]byte(nil), p.in[start:p.i]...)
	for p.i < len(p.in) {
		c := p.in[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.errorf("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.in) {
			break
		}
		e := p.in[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A valid pair joins; anything else is U+FFFD, as
				// encoding/json decodes it.
				if p.i+1 < len(p.in) && p.in[p.i] == '\\' && p.in[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if r2, ok := p.hex4(); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							buf = utf8.AppendRune(buf, d)
							continue
						}
					}
					p.i = save
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.errorf("invalid escape \\%c", e)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.in) {
		return 0, false
	}
	var r rune
	for _, c := range p.in[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// number scans -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? and writes its
// canonical form.
func (p *parser) number() error {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.in) && p.in[p.i] >= '0' && p.in[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.in[p.i] == '-' {
		p.i++
	}
	intStart := p.i
	if p.i < len(p.in) && p.in[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return p.errorf("invalid number")
	}
	intDigits := p.i - intStart
	fracStart, fracEnd := p.i, p.i
	if p.i < len(p.in) && p.in[p.i] == '.' {
		p.i++
		fracStart = p.i
		if digits() == 0 {
			return p.errorf("invalid number")
		}
		fracEnd = p.i
	}
	exp := false
	if p.i < len(p.in) && (p.in[p.i] == 'e' || p.in[p.i] == 'E') {
		exp = true
		p.i++
		if p.i < len(p.in) && (p.in[p.i] == '+' || p.in[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return p.errorf("invalid number")
		}
	}
	if lit := p.in[start:p.i]; !exp && plainCanonical(lit, intDigits, p.in[fracStart:fracEnd]) {
		p.out = append(p.out, lit...)
		return nil
	}
	s, err := Number(string(p.in[start:p.i]))
	if err != nil {
		return err
	}
	p.out = append(p.out, s...)
	return nil
}

// plainCanonical reports whether a number literal without exponent is
// already in the form Number would give it: no trailing fraction zeros, not
// a negative or fractional zero, at most 21 integer digits, and fewer than
// six zeros after "0." — the common case, written without allocating.
func plainCanonical(lit []byte, intDigits int, frac []byte) bool {
	if intDigits > 21 || len(lit) > MaxNumberBytes {
		return false
	}
	neg := lit[0] == '-'
	zeroInt := lit[len(lit)-len(frac)-intDigits-btoi(len(frac) > 0)] == '0'
	if len(frac) == 0 {
		return !(zeroInt && neg)
	}
	if frac[len(frac)-1] == '0' {
		return false // also rejects an all-zero fraction
	}
	if zeroInt {
		lead := 0
		for lead < len(frac) && frac[lead] == '0' {
			lead++
		}
		return lead < 6
	}
	return true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
