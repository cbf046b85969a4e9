package job

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
)

// TestJobSelectVectors runs the committed CIP-2 selection vectors through
// `cowboy job select`.
func TestJobSelectVectors(t *testing.T) {
	raw, err := os.ReadFile("../../../chain/offchain/selection/testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Selection []struct {
			Name       string          `json:"name"`
			Seed       string          `json:"seed"`
			M          json.Number     `json:"m"`
			Candidates json.RawMessage `json:"candidates"`
			Expected   []string        `json:"expected"`
		} `json:"selection"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (string, error) {
		var out bytes.Buffer
		f := &cmdutil.Factory{In: strings.NewReader(stdin), Out: &out, ErrOut: io.Discard, Now: time.Now,
			NodeURL: "http://127.0.0.1:1", Home: t.TempDir()}
		cmd := NewCmdJob(f)
		cmd.SetArgs(args)
		cmd.SetIn(f.In)
		cmd.SetOut(f.Out)
		cmd.SetErr(f.ErrOut)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		return out.String(), err
	}
	n := 0
	for _, c := range v.Selection {
		if c.Expected == nil {
			continue
		}
		n++
		out, err := run(string(c.Candidates), "select", "--seed", c.Seed, "--m", c.M.String(), "--candidates", "-")
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		got := strings.Fields(out)
		if strings.ToLower(strings.Join(got, " ")) != strings.ToLower(strings.Join(c.Expected, " ")) {
			t.Errorf("%s: got %v, want %v", c.Name, got, c.Expected)
		}
	}
	if n == 0 {
		t.Fatal("no vectors ran")
	}
}
