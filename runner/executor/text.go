package executor

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrNotUTF8 marks a source (response body, model output, extracted value)
// that is not faithful UTF-8 text: bytes that are not UTF-8, or a JSON \u
// escape of a UTF-16 surrogate that is not half of a pair. Decoders
// (encoding/json, go-openai, strings.ToValidUTF8) silently turn both into
// U+FFFD, so a result built from them would differ from the source while
// looking valid to every later check. Executors refuse such sources for
// text and JSON results and wrap ErrUpstream with it (the service sent
// it); binary results carry bytes as received instead (docs/EXECUTORS.md,
// "Invalid UTF-8").
var ErrNotUTF8 = errors.New("not valid UTF-8 text")

// TextChecker scans a stream of UTF-8 text that carries JSON (a JSON body,
// or server-sent events of JSON chunks) for what ErrNotUTF8 describes. Feed
// it with Write and call Close at the end of the stream. The zero value is
// ready. It holds O(1) state whatever the stream's length.
type TextChecker struct {
	pend  [utf8.UTFMax]byte // an incomplete multi-byte rune at a Write boundary
	npend int
	off   int64 // bytes consumed, for error positions
	esc   escState
	hex   int  // hex digits read of the current \u escape
	val   rune // its value so far
	err   error
}

type escState uint8

const (
	escNone      escState = iota
	escBackslash          // after an unescaped '\'
	escU                  // in the 4 hex digits of \u
	escNeedBS             // after a high-surrogate escape: '\' must follow
	escNeedU              // … then 'u'
	escLowU               // in the hex digits of the low-surrogate escape
)

// CheckText reports whether b is faithful UTF-8 text (see ErrNotUTF8).
func CheckText(b []byte) error {
	var c TextChecker
	_, _ = c.Write(b)
	return c.Close()
}

// Write consumes p; after the first fault it returns that error for every
// call.
func (c *TextChecker) Write(p []byte) (int, error) {
	for i := 0; i < len(p) && c.err == nil; {
		if c.npend > 0 {
			c.pend[c.npend] = p[i]
			c.npend++
			i++
			if !utf8.FullRune(c.pend[:c.npend]) {
				continue
			}
			if r, size := utf8.DecodeRune(c.pend[:c.npend]); (r == utf8.RuneError && size <= 1) || size != c.npend {
				c.fail("bytes %x are not UTF-8", c.pend[:c.npend])
			} else {
				c.other()
			}
			c.off += int64(c.npend)
			c.npend = 0
			continue
		}
		b := p[i]
		if b < utf8.RuneSelf {
			c.ascii(b)
			c.off++
			i++
			continue
		}
		if !utf8.FullRune(p[i:]) {
			c.npend = copy(c.pend[:], p[i:])
			break
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 {
			c.fail("byte %#02x is not UTF-8", b)
			break
		}
		c.other()
		c.off += int64(size)
		i += size
	}
	if c.err != nil {
		return 0, c.err
	}
	return len(p), nil
}

// Close reports a stream that ended inside a rune or a surrogate pair.
func (c *TextChecker) Close() error {
	switch {
	case c.err != nil:
	case c.npend > 0:
		c.fail("truncated rune %x at the end", c.pend[:c.npend])
	case c.esc == escNeedBS || c.esc == escNeedU || c.esc == escLowU:
		c.fail("unpaired surrogate escape at the end")
	}
	return c.err
}

func (c *TextChecker) fail(format string, args ...any) {
	c.err = fmt.Errorf("%w: at byte %d: %s", ErrNotUTF8, c.off, fmt.Sprintf(format, args...))
}

// ascii advances the escape state on one ASCII byte. Outside JSON strings a
// backslash cannot occur, so tracking unescaped backslashes is enough to
// find every \u escape.
func (c *TextChecker) ascii(b byte) {
	switch c.esc {
	case escNone:
		if b == '\\' {
			c.esc = escBackslash
		}
	case escBackslash:
		c.esc = escNone
		if b == 'u' {
			c.esc, c.hex, c.val = escU, 0, 0
		}
	case escU, escLowU:
		d, ok := hexDigit(b)
		if !ok {
			if c.esc == escLowU {
				c.fail("high surrogate escape not followed by a low one")
				return
			}
			c.esc = escNone // not JSON; the decoder refuses it
			return
		}
		c.val, c.hex = c.val<<4|d, c.hex+1
		if c.hex < 4 {
			return
		}
		switch {
		case c.esc == escLowU && (c.val < 0xdc00 || c.val > 0xdfff):
			c.fail("high surrogate escape followed by \\u%04x", c.val)
		case c.esc == escLowU:
			c.esc = escNone
		case c.val >= 0xd800 && c.val <= 0xdbff:
			c.esc = escNeedBS
		case c.val >= 0xdc00 && c.val <= 0xdfff:
			c.fail("lone low surrogate escape \\u%04x", c.val)
		default:
			c.esc = escNone
		}
	case escNeedBS:
		if b != '\\' {
			c.fail("high surrogate escape not followed by a low one")
			return
		}
		c.esc = escNeedU
	case escNeedU:
		if b != 'u' {
			c.fail("high surrogate escape not followed by a low one")
			return
		}
		c.esc, c.hex, c.val = escLowU, 0, 0
	}
}

// other advances the escape state on a multi-byte rune.
func (c *TextChecker) other() {
	switch c.esc {
	case escNeedBS, escNeedU, escLowU:
		c.fail("high surrogate escape not followed by a low one")
	default:
		c.esc = escNone
	}
}

func hexDigit(b byte) (rune, bool) {
	switch {
	case b >= '0' && b <= '9':
		return rune(b - '0'), true
	case b >= 'a' && b <= 'f':
		return rune(b-'a') + 10, true
	case b >= 'A' && b <= 'F':
		return rune(b-'A') + 10, true
	}
	return 0, false
}
