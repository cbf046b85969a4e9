package sim

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestFaultFree(t *testing.T) {
	res, err := Run(Config{Seed: 1, HealAt: 1, Ticks: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Finalized[0] < 50 {
		t.Fatalf("only %d blocks finalized in 300 ticks", res.Finalized[0])
	}
	t.Logf("%+v", res)
}

// scenario derives a faulty configuration from a seed: validator count,
// stakes, byzantine behaviour and network faults all vary.
func scenario(seed uint64) Config {
	c := Config{Seed: seed}
	x := seed * 0x9e3779b97f4a7c15
	pick := func(n uint64) uint64 { v := x % n; x = x/n ^ (x>>29)*0xbf58476d1ce4e5b9; return v }
	c.N = 4 + int(pick(4)) // 4..7
	if pick(3) == 0 {
		c.Stakes = make([]uint64, c.N)
		for i := range c.Stakes {
			c.Stakes[i] = 1 + pick(5)
		}
		// Keep the byzantine (last) validator light enough to stay below a third.
		c.Stakes[c.N-1] = 1
	}
	c.Byzantine = int(pick(2)) // 0 or 1; more is checked against the bound below
	if c.N >= 7 && pick(2) == 0 {
		c.Byzantine = 2
		if c.Stakes != nil {
			c.Stakes[c.N-2] = 1
		}
	}
	c.Equivocate = c.Byzantine > 0
	c.DoubleVote = c.Byzantine > 0 && pick(2) == 0
	c.Adversarial = c.Byzantine > 0 && pick(2) == 0
	c.Drop = []float64{0, 0.05, 0.2, 0.4}[pick(4)]
	c.Partitions = pick(3) != 0
	c.Crashes = pick(2) == 0
	c.MaxDelay = 1 + int(pick(6))
	return c
}

func runSeeds(t *testing.T, from, n uint64) {
	start := time.Now()
	var msgs, evidence, restarts, low, forks int
	for seed := from; seed < from+n; seed++ {
		cfg := scenario(seed)
		res, err := Run(cfg)
		if err != nil {
			if errors.Is(err, ErrSafety) {
				t.Fatalf("seed %d %+v: %v", seed, cfg, err)
			}
			t.Errorf("seed %d %+v: %v", seed, cfg, err)
			continue
		}
		msgs += res.Messages
		evidence += res.Evidence
		restarts += res.Restarts
		low += res.LowProposals
		forks += res.CertifiedForks
	}
	t.Logf("%d seeds in %v: %d messages, %d evidence, %d restarts, %d low proposals, %d certified forks",
		n, time.Since(start).Round(time.Millisecond), msgs, evidence, restarts, low, forks)
}

func TestSeeds(t *testing.T) {
	n := uint64(300)
	if testing.Short() {
		n = 50
	}
	runSeeds(t, 1, n)
}

// TestSoak runs thousands of seeds: COWBOY_SOAK=1 go test -run Soak
// (COWBOY_SOAK_SEEDS overrides the count).
func TestSoak(t *testing.T) {
	if os.Getenv("COWBOY_SOAK") == "" {
		t.Skip("set COWBOY_SOAK=1")
	}
	n := uint64(5000)
	if v, err := strconv.ParseUint(os.Getenv("COWBOY_SOAK_SEEDS"), 10, 64); err == nil {
		n = v
	}
	runSeeds(t, 1_000_000, n)
}

func TestBLS(t *testing.T) {
	if testing.Short() {
		t.Skip("real pairings are slow")
	}
	for seed := uint64(1); seed <= 2; seed++ {
		cfg := Config{Seed: seed, BLS: true, Byzantine: 1, Equivocate: true, DoubleVote: true, Drop: 0.1, HealAt: 60, Ticks: 200}
		res, err := Run(cfg)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Logf("seed %d: %+v", seed, res)
	}
}

func TestDeterministic(t *testing.T) {
	cfg := scenario(42)
	a, errA := Run(cfg)
	b, errB := Run(cfg)
	if (errA == nil) != (errB == nil) || a.Messages != b.Messages || a.Rounds != b.Rounds {
		t.Fatalf("same seed, different runs: %+v %v / %+v %v", a, errA, b, errB)
	}
}

// TestLiteralRuleSeed replays the soak seed on which the literal §6.1 rule
// ("final when the direct child has a QC", without the consecutive-round
// condition) finalized conflicting blocks: with that one line changed in
// Core.checkFinal this run fails with ErrSafety; with the real rule it must
// pass. See docs/CONSENSUS.md §3.
func TestLiteralRuleSeed(t *testing.T) {
	res, err := Run(scenario(1002327))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
}

// smallScenario is a cheaper variant of scenario for volume: four or five
// validators (one byzantine in half the runs), the same fault menu, faults
// healing at tick 40 and a run of 220 ticks.
func smallScenario(seed uint64) Config {
	c := scenario(seed)
	c.N = 4 + int(seed%2)
	c.Stakes = nil
	c.Byzantine = int(seed / 2 % 2)
	c.Equivocate = c.Byzantine > 0
	c.DoubleVote = c.DoubleVote && c.Byzantine > 0
	c.Adversarial = c.Adversarial && c.Byzantine > 0
	c.HealAt, c.Ticks = 40, 220
	return c
}

// TestSeedsSmall runs 2,000 seeded small scenarios, spread over the CPUs,
// so that every `go test` covers thousands of runs (the soak runs the
// full-size ones).
func TestSeedsSmall(t *testing.T) {
	n := uint64(2000)
	if testing.Short() {
		n = 200
	}
	const base = 10_000_000
	start := time.Now()
	workers := runtime.GOMAXPROCS(0)
	var (
		next atomic.Uint64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= n || t.Failed() {
					return
				}
				cfg := smallScenario(base + i)
				if _, err := Run(cfg); err != nil {
					t.Errorf("seed %d %+v: %v", base+i, cfg, err)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d small seeds in %v on %d workers", n, time.Since(start).Round(time.Millisecond), workers)
}
