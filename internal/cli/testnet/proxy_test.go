package testnet

import (
	"slices"
	"testing"
)

func TestFlagValue(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "--cowboyd", "/x/cowboyd", "--dir", "d"}, "/x/cowboyd"},
		{[]string{"up", "--cowboyd=/y/cowboyd"}, "/y/cowboyd"},
		{[]string{"up", "--dir", "d"}, ""},
		{[]string{"up", "--cowboyd"}, ""},
		{[]string{"up", "--", "--cowboyd", "/z"}, ""},
	} {
		if got := flagValue(c.args, "cowboyd"); got != c.want {
			t.Errorf("flagValue(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestAfterTestnet(t *testing.T) {
	if got := afterTestnet([]string{"--home", "h", "help", "testnet", "init", "--dir", "x"}); !slices.Equal(got, []string{"init", "x"}) {
		// A flag's value is kept: `help` takes no flags after the command path.
		t.Errorf("got %q", got)
	}
	if got := afterTestnet([]string{"help", "status"}); got != nil {
		t.Errorf("got %q", got)
	}
}
