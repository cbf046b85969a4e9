package sim

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.golden from the current behaviour")

// TestGolden pins a few seeded runs to expected-output files, so that any
// change of protocol behaviour shows up as a diff (regenerate with
// go test ./chain/consensus/sim -run Golden -rewrite).
func TestGolden(t *testing.T) {
	cases := map[string]Config{
		"fault_free":   {Seed: 1, HealAt: 1, Ticks: 120},
		"equivocation": {Seed: 2, Byzantine: 1, Equivocate: true, DoubleVote: true, HealAt: 1, Ticks: 150},
		"partitions":   {Seed: 3, N: 7, Byzantine: 2, Equivocate: true, Adversarial: true, Drop: 0.2, Partitions: true, Crashes: true, MaxDelay: 4},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			s, err := run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "config %+v\n", s.cfg)
			fmt.Fprintf(&b, "messages %d evidence %d restarts %d finalized-at-heal %d\n", s.res.Messages, s.res.Evidence, s.res.Restarts, s.res.FinalizedAtHeal)
			for _, n := range s.nodes {
				st := n.core.Status()
				fmt.Fprintf(&b, "validator %d byzantine=%v round %d committed %d finalized %d head %x\n",
					n.id, n.byz, st.Round, st.CommittedHeight, st.FinalizedHeight, st.FinalizedHash[:6])
			}
			path := filepath.Join("testdata", name+".golden")
			if *rewrite {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -rewrite)", err)
			}
			if got := b.String(); got != string(want) {
				t.Fatalf("behaviour changed (rerun with -rewrite if intended):\n--- want\n%s--- got\n%s", want, got)
			}
		})
	}
}
