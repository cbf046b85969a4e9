package executor

import (
	"errors"
	"testing"
)

func TestCheckText(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"a":"héllo 😀"}`, true},
		{`{"a":"\ud83d\ude00"}`, true},
		{`{"a":"\u00e9\uFFFD"}`, true}, // an escaped U+FFFD is text, not damage
		{"{\"a\":\"\uFFFD\"}", true},
		{`{"a":"\\ud800"}`, true}, // an escaped backslash, then "ud800"
		{`{"a":"\\\ud83d\ude00"}`, true},
		{"{\"a\":\"\xff\"}", false},
		{"{\"a\":\"\xe2\x82\"}", false}, // truncated rune
		{"\xe2\x82", false},             // truncated at the end
		{`{"a":"\ud800"}`, false},
		{`{"a":"\udc00"}`, false},
		{`{"a":"\ud800x"}`, false},
		{`{"a":"\ud800\u0041"}`, false},
		{`{"a":"\\\ud800"}`, false},
		{`"\ud83d`, false},
		{"\"\\ud83d\u00e9\"", false},
	} {
		err := CheckText([]byte(c.in))
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNotUTF8)) {
			t.Errorf("%q: %v", c.in, err)
		}
		// Byte by byte: Write boundaries inside runes and escapes.
		var ch TextChecker
		for i := range len(c.in) {
			_, _ = ch.Write([]byte{c.in[i]})
		}
		if err2 := ch.Close(); (err2 == nil) != c.ok {
			t.Errorf("%q byte by byte: %v", c.in, err2)
		}
	}
}
