package selection

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the implementation")

func cby(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

func addrN(i int) types.Address {
	h := types.Keccak256([]byte("test-addr"), binary.LittleEndian.AppendUint64(nil, uint64(i)))
	var a types.Address
	copy(a[:], h[:20])
	return a
}

func TestWeight(t *testing.T) {
	min := MinStake()
	tests := []struct {
		name  string
		stake *big.Int
		want  uint64
	}{
		{"nil", nil, 1},
		{"zero", big.NewInt(0), 1},
		{"one wei", big.NewInt(1), 1},
		{"min-1", new(big.Int).Sub(min, big.NewInt(1)), 1},
		{"min", min, 2},          // floor(log2(2))+1
		{"2min", cby(20_000), 2}, // floor(log2(3))+1
		{"3min", cby(30_000), 3}, // floor(log2(4))+1
		{"7min-1wei", new(big.Int).Sub(cby(70_000), big.NewInt(1)), 3}, // 6.99… → log2(7.99…)=2.99…
		{"7min", cby(70_000), 4},
		{"1023min", cby(1023 * 10_000), 11},
		{"1024min", cby(1024 * 10_000), 11}, // spec: 1024× stake → 11× weight
		{"2047min", cby(2047 * 10_000), 12},
		{"max u256", new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == 0 {
				want = refWeight(tc.stake)
			}
			if got := Weight(tc.stake); got != want {
				t.Fatalf("Weight(%v) = %d, want %d", tc.stake, got, want)
			}
			if tc.stake != nil && refWeight(tc.stake) != want {
				t.Fatalf("reference weight disagrees: %d", refWeight(tc.stake))
			}
		})
	}
}

// refWeight is stake_to_weight computed the naive way: the largest k with
// 2^k ≤ s/MIN_STAKE + 1 (exact rational comparison 2^k·MIN ≤ s + MIN), plus 1.
func refWeight(s *big.Int) uint64 {
	if s == nil {
		s = new(big.Int)
	}
	min := MinStake()
	lhs := new(big.Int).Add(s, min) // (s/MIN + 1)·MIN
	k := uint64(0)
	for {
		next := new(big.Int).Lsh(min, uint(k+1))
		if next.Cmp(lhs) > 0 {
			break
		}
		k++
	}
	return k + 1
}

// refSelect follows the §5 pseudocode literally with big integers: it sums
// weights[i..N] afresh every round, reduces the full 64-bit little-endian
// prefix, walks cumulative weights and swaps both arrays.
func refSelect(seed types.Hash, cands []Stake, m int) []types.Address {
	c := slices.Clone(cands)
	weights := make([]*big.Int, len(c))
	for i := range c {
		weights[i] = new(big.Int).SetUint64(refWeight(c[i].Stake))
	}
	current := seed[:]
	for i := 0; i < m; i++ {
		total := new(big.Int)
		for _, w := range weights[i:] {
			total.Add(total, w)
		}
		ile8 := make([]byte, 8)
		binary.LittleEndian.PutUint64(ile8, uint64(i))
		hash := types.Keccak256(current, ile8)
		r := new(big.Int).SetUint64(binary.LittleEndian.Uint64(hash[0:8]))
		r.Mod(r, total)
		cum := new(big.Int)
		j := 0
		for ; j < len(weights)-i; j++ {
			cum.Add(cum, weights[i+j])
			if r.Cmp(cum) < 0 {
				break
			}
		}
		c[i], c[i+j] = c[i+j], c[i]
		weights[i], weights[i+j] = weights[i+j], weights[i]
		current = hash[:]
	}
	out := make([]types.Address, m)
	for i := range out {
		out[i] = c[i].Address
	}
	return out
}

func randomStakes(rng *rand.Rand, n int) []Stake {
	s := make([]Stake, n)
	for i := range s {
		var st *big.Int
		switch rng.IntN(4) {
		case 0:
			st = cby(10_000)
		case 1:
			st = cby(int64(rng.IntN(5_000_000)))
		case 2:
			var b [32]byte
			for k := range b {
				b[k] = byte(rng.Uint32())
			}
			st = new(big.Int).SetBytes(b[:rng.IntN(33)])
		default:
			st = new(big.Int).Add(cby(int64(rng.IntN(100_000))), big.NewInt(rng.Int64N(1e18)))
		}
		s[i] = Stake{Address: addrN(rng.IntN(1 << 30)), Stake: st}
	}
	slices.SortFunc(s, func(a, b Stake) int { return bytes.Compare(a.Address[:], b.Address[:]) })
	return slices.CompactFunc(s, func(a, b Stake) bool { return a.Address == b.Address })
}

func TestSelectMatchesLiteralReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := 0; iter < 2000; iter++ {
		n := 1 + rng.IntN(40)
		cands := randomStakes(rng, n)
		m := 1 + rng.IntN(len(cands))
		var seed types.Hash
		binary.LittleEndian.PutUint64(seed[:], rng.Uint64())
		seed = types.Keccak256(seed[:])
		got, err := SelectAddresses(seed, cands, m)
		if err != nil {
			t.Fatal(err)
		}
		if want := refSelect(seed, cands, m); !slices.Equal(got, want) {
			t.Fatalf("iter %d: Select = %v, reference = %v", iter, got, want)
		}
	}
}

func TestSelectErrors(t *testing.T) {
	cands := []Stake{{addrN(1), cby(1)}, {addrN(2), cby(1)}}
	_ = SortStakes(cands)
	if _, err := Select(types.Hash{}, cands, 0); !errors.Is(err, ErrBadM) {
		t.Fatalf("m=0: %v", err)
	}
	if _, err := Select(types.Hash{}, cands, 3); !errors.Is(err, ErrNotEnoughCandidates) {
		t.Fatalf("m>n: %v", err)
	}
	rev := []Stake{cands[1], cands[0]}
	if _, err := Select(types.Hash{}, rev, 1); !errors.Is(err, ErrBadCandidates) {
		t.Fatalf("unsorted: %v", err)
	}
	dup := []Stake{cands[0], cands[0]}
	if _, err := Select(types.Hash{}, dup, 1); !errors.Is(err, ErrBadCandidates) {
		t.Fatalf("duplicate: %v", err)
	}
	neg := []Stake{{addrN(1), big.NewInt(-1)}}
	if _, err := Select(types.Hash{}, neg, 1); !errors.Is(err, ErrBadCandidates) {
		t.Fatalf("negative: %v", err)
	}
	// Selecting all N is a permutation of the candidates.
	all, err := SelectAddresses(types.Keccak256([]byte("x")), cands, 2)
	if err != nil || len(all) != 2 || all[0] == all[1] {
		t.Fatalf("m=n: %v %v", all, err)
	}
}

// --- test vectors ---------------------------------------------------------

type vectorCandidate struct {
	Address types.Address `json:"address"`
	Stake   string        `json:"stake"`
}

type selectVector struct {
	Name       string            `json:"name"`
	Seed       types.Hash        `json:"seed"`
	M          int               `json:"m"`
	Candidates []vectorCandidate `json:"candidates"`
	Weights    []uint64          `json:"weights"`
	Expected   []types.Address   `json:"expected,omitempty"`
	Error      string            `json:"error,omitempty"`
}

type seedVector struct {
	BlockHash   types.Hash   `json:"block_hash"`
	JobID       types.Hash   `json:"job_id"`
	SubmittedAt uint64       `json:"submitted_at"`
	Seed        types.Hash   `json:"seed"`
	RetrySeeds  []types.Hash `json:"retry_seeds"`
}

type rootVector struct {
	Entries []struct {
		Address    types.Address `json:"address"`
		Stake      string        `json:"stake"`
		Reputation uint64        `json:"reputation"`
	} `json:"entries"`
	Root       types.Hash    `json:"root"`
	Aggregator types.Address `json:"aggregator"`
}

type vectorFile struct {
	Comment   string         `json:"comment"`
	Seeds     []seedVector   `json:"seeds"`
	Selection []selectVector `json:"selection"`
	Roots     []rootVector   `json:"roots"`
}

func buildVectors(t *testing.T) vectorFile {
	vf := vectorFile{Comment: "CIP-2 §5/§6 selection vectors. Candidates are listed in arbitrary order; implementations sort ascending by address first. Regenerate with go test -run TestVectors -update."}
	for i, sub := range []uint64{0, 1, 1_000_000, 1<<64 - 1} {
		bh := types.Keccak256([]byte("block"), []byte{byte(i)})
		jid := types.Keccak256([]byte("job"), []byte{byte(i)})
		sv := seedVector{BlockHash: bh, JobID: jid, SubmittedAt: sub, Seed: Seed(bh, jid, sub)}
		for r := uint32(1); r <= MaxRetries; r++ {
			sv.RetrySeeds = append(sv.RetrySeeds, RetrySeed(sv.Seed, r))
		}
		vf.Seeds = append(vf.Seeds, sv)
	}
	type spec struct {
		name   string
		stakes []*big.Int
		m      int
	}
	many := func(n int, f func(i int) *big.Int) []*big.Int {
		s := make([]*big.Int, n)
		for i := range s {
			s[i] = f(i)
		}
		return s
	}
	specs := []spec{
		{"single", []*big.Int{cby(10_000)}, 1},
		{"equal-stakes-3-of-5", many(5, func(int) *big.Int { return cby(10_000) }), 3},
		{"whale-vs-minnows-1-of-4", []*big.Int{cby(10_240_000), cby(10_000), cby(10_000), cby(10_000)}, 1},
		{"whale-vs-minnows-2-of-4", []*big.Int{cby(10_240_000), cby(10_000), cby(10_000), cby(10_000)}, 2},
		{"below-min-and-zero", []*big.Int{big.NewInt(0), big.NewInt(1), cby(9_999), cby(10_000), cby(30_000)}, 2},
		{"all-of-6", many(6, func(i int) *big.Int { return cby(int64(10_000 << i)) }), 6},
		{"huge-u256", []*big.Int{new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)), cby(10_000), cby(1)}, 2},
		{"20-mixed-5", many(20, func(i int) *big.Int { return cby(int64(10_000 + 37_000*i*i)) }), 5},
		{"m-too-large", []*big.Int{cby(10_000), cby(10_000)}, 3},
	}
	for k, sp := range specs {
		v := selectVector{Name: sp.name, Seed: types.Keccak256([]byte("vector-seed"), []byte{byte(k)}), M: sp.m}
		var stakes []Stake
		for i, st := range sp.stakes {
			a := addrN(1000*k + i)
			v.Candidates = append(v.Candidates, vectorCandidate{Address: a, Stake: st.String()})
			stakes = append(stakes, Stake{Address: a, Stake: st})
		}
		if err := SortStakes(stakes); err != nil {
			t.Fatal(err)
		}
		for _, s := range stakes {
			v.Weights = append(v.Weights, Weight(s.Stake))
		}
		got, err := SelectAddresses(v.Seed, stakes, v.M)
		if err != nil {
			v.Error = err.Error()
		} else {
			v.Expected = got
		}
		vf.Selection = append(vf.Selection, v)
	}
	for k, n := range []int{1, 2, 3, 5} {
		var rv rootVector
		var entries []SnapshotEntry
		for i := 0; i < n; i++ {
			e := SnapshotEntry{Address: addrN(5000 + 10*k + i), Stake: cby(int64(10_000 * (i + 1))), Reputation: uint64(50 + (i*7)%3)}
			entries = append(entries, e)
		}
		slices.SortFunc(entries, func(a, b SnapshotEntry) int { return bytes.Compare(a.Address[:], b.Address[:]) })
		for _, e := range entries {
			rv.Entries = append(rv.Entries, struct {
				Address    types.Address `json:"address"`
				Stake      string        `json:"stake"`
				Reputation uint64        `json:"reputation"`
			}{e.Address, e.Stake.String(), e.Reputation})
		}
		root, err := CandidateRoot(entries)
		if err != nil {
			t.Fatal(err)
		}
		rv.Root = root
		rv.Aggregator, _ = Aggregator(entries)
		vf.Roots = append(vf.Roots, rv)
	}
	return vf
}

func TestVectors(t *testing.T) {
	path := filepath.Join("testdata", "vectors.json")
	if *update {
		b, err := json.MarshalIndent(buildVectors(t), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vf vectorFile
	if err := json.Unmarshal(raw, &vf); err != nil {
		t.Fatal(err)
	}
	if len(vf.Selection) == 0 || len(vf.Seeds) == 0 || len(vf.Roots) == 0 {
		t.Fatal("empty vector file")
	}
	for _, sv := range vf.Seeds {
		if got := Seed(sv.BlockHash, sv.JobID, sv.SubmittedAt); got != sv.Seed {
			t.Errorf("seed(%d) = %s, want %s", sv.SubmittedAt, got, sv.Seed)
		}
		for r, want := range sv.RetrySeeds {
			if got := RetrySeed(sv.Seed, uint32(r+1)); got != want {
				t.Errorf("retry seed %d = %s, want %s", r+1, got, want)
			}
		}
	}
	for _, v := range vf.Selection {
		t.Run(v.Name, func(t *testing.T) {
			in, _ := json.Marshal(v.Candidates)
			got, err := SelectFromJSON(v.Seed, v.M, in)
			if v.Error != "" {
				if err == nil || err.Error() != v.Error {
					t.Fatalf("want error %q, got %v (%v)", v.Error, err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, v.Expected) {
				t.Fatalf("got %v, want %v", got, v.Expected)
			}
			stakes, _ := ParseStakesJSON(in)
			if !slices.Equal(refSelect(v.Seed, stakes, v.M), v.Expected) {
				t.Fatal("literal reference disagrees with the vector")
			}
			for i, s := range stakes {
				if Weight(s.Stake) != v.Weights[i] {
					t.Fatalf("weight %d = %d, vector %d", i, Weight(s.Stake), v.Weights[i])
				}
			}
		})
	}
	for i, rv := range vf.Roots {
		var entries []SnapshotEntry
		for _, e := range rv.Entries {
			st, err := ParseStake(e.Stake)
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, SnapshotEntry{Address: e.Address, Stake: st, Reputation: e.Reputation})
		}
		root, err := CandidateRoot(entries)
		if err != nil || root != rv.Root {
			t.Errorf("root %d = %s (%v), want %s", i, root, err, rv.Root)
		}
		if agg, _ := Aggregator(entries); agg != rv.Aggregator {
			t.Errorf("aggregator %d = %s, want %s", i, agg, rv.Aggregator)
		}
	}
	if !*update {
		// The committed file must be exactly what the implementation produces,
		// so a behaviour change cannot slip in with a silently edited vector.
		b, _ := json.MarshalIndent(buildVectors(t), "", "  ")
		if string(append(b, '\n')) != string(raw) {
			t.Fatal("testdata/vectors.json differs from the generator; run with -update and review the diff")
		}
	}
}

// --- statistics -------------------------------------------------------------

// chiSquare returns Σ (obs-exp)²/exp.
func chiSquare(obs []int, exp []float64) float64 {
	var x float64
	for i := range obs {
		d := float64(obs[i]) - exp[i]
		x += d * d / exp[i]
	}
	return x
}

// TestSelectionFrequencies runs 100,000 seeds. For m = 1 the pick frequencies
// must follow weight/total; for m = 2 the inclusion frequencies must follow
// the exact probabilities of weighted sampling without replacement. The
// thresholds are χ² critical values at p = 10^-6 (a correct implementation
// fails with probability 10^-6; the seeds are fixed, so the outcome is
// deterministic). The test also demonstrates power: the same counts measured
// against a uniform (unweighted) or linear-in-stake model give χ² values
// hundreds of times above the threshold, so an implementation that ignored or
// mis-applied the weights could not pass by accident.
func TestSelectionFrequencies(t *testing.T) {
	const trials = 100_000
	stakesCBY := []int64{10_000, 10_000, 30_000, 70_000, 150_000, 1_270_000, 10_240_000, 0}
	cands := make([]Stake, len(stakesCBY))
	for i, s := range stakesCBY {
		cands[i] = Stake{Address: addrN(900 + i), Stake: cby(s)}
	}
	if err := SortStakes(cands); err != nil {
		t.Fatal(err)
	}
	n := len(cands)
	w := make([]float64, n)
	lin := make([]float64, n)
	var W, L float64
	for i, c := range cands {
		w[i] = float64(Weight(c.Stake))
		W += w[i]
		f, _ := new(big.Float).SetInt(c.Stake).Float64()
		lin[i] = f + 1
		L += lin[i]
	}
	first := make([]int, n)
	incl2 := make([]int, n)
	for k := 0; k < trials; k++ {
		seed := types.Keccak256([]byte("stat"), binary.LittleEndian.AppendUint64(nil, uint64(k)))
		idx, err := Select(seed, cands, 2)
		if err != nil {
			t.Fatal(err)
		}
		// The first pick of an m=2 selection is exactly the m=1 selection.
		first[idx[0]]++
		incl2[idx[0]]++
		incl2[idx[1]]++
	}
	// χ²(7 dof) critical value at p = 1e-6 is 37.7.
	const crit7 = 37.7
	exp1, uni, linExp := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range w {
		exp1[i] = trials * w[i] / W
		uni[i] = trials / float64(n)
		linExp[i] = trials * lin[i] / L
	}
	if x := chiSquare(first, exp1); x > crit7 {
		t.Fatalf("m=1: χ² = %.2f > %.1f; counts %v expected %v", x, crit7, first, exp1)
	} else {
		t.Logf("m=1 χ² vs weights = %.2f (critical %.1f)", x, crit7)
	}
	if x := chiSquare(first, uni); x < 100*crit7 {
		t.Fatalf("test has no power against uniform selection: χ² = %.2f", x)
	} else {
		t.Logf("m=1 χ² vs uniform = %.0f, vs linear stake = %.0f", x, chiSquare(first, linExp))
	}
	if x := chiSquare(first, linExp); x < 100*crit7 {
		t.Fatalf("test has no power against linear stake weighting: χ² = %.2f", x)
	}
	// Inclusion probabilities for m=2: P(i) = w_i/W + Σ_{j≠i} (w_j/W)·(w_i/(W−w_j)).
	// Each trial includes exactly two runners, so compare per-runner
	// inclusion counts with a binomial z-bound rather than χ² (the cells are
	// not a multinomial). |z| ≤ 5 per runner: P(false failure) < 8·6e-7.
	for i := range w {
		p := w[i] / W
		for j := range w {
			if j != i {
				p += (w[j] / W) * (w[i] / (W - w[j]))
			}
		}
		mean := trials * p
		sd := mathSqrt(trials * p * (1 - p))
		z := (float64(incl2[i]) - mean) / sd
		if z > 5 || z < -5 {
			t.Fatalf("m=2 runner %d: included %d times, expected %.1f (z=%.2f)", i, incl2[i], mean, z)
		}
	}
}

func mathSqrt(x float64) float64 {
	z := x
	for range 60 {
		z = (z + x/z) / 2
	}
	return z
}

func TestSelectFromJSON(t *testing.T) {
	seed := types.Keccak256([]byte("json"))
	a, b, c := addrN(1), addrN(2), addrN(3)
	in1 := fmt.Sprintf(`[{"address":"%s","stake":"10000000000000000000000"},{"address":"%s","stake":"5"},{"address":"%s","stake":"99000000000000000000000"}]`, a, b, c)
	in2 := fmt.Sprintf(`[{"address":"%s","stake":"99000000000000000000000"},{"address":"%s","stake":"10000000000000000000000"},{"address":"%s","stake":"5"}]`, c, a, b)
	r1, err := SelectFromJSON(seed, 2, []byte(in1))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := SelectFromJSON(seed, 2, []byte(in2))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r1, r2) {
		t.Fatalf("input order changed the result: %v vs %v", r1, r2)
	}
	bad := []string{
		`{}`,
		`[{"address":"0x01","stake":"1"}]`,
		fmt.Sprintf(`[{"address":"%s","stake":"01"}]`, a),
		fmt.Sprintf(`[{"address":"%s","stake":"-1"}]`, a),
		fmt.Sprintf(`[{"address":"%s","stake":"1e3"}]`, a),
		fmt.Sprintf(`[{"address":"%s","stake":1}]`, a),
		fmt.Sprintf(`[{"address":"%s","stake":"1","x":1}]`, a),
		fmt.Sprintf(`[{"address":"%s","stake":"1"},{"address":"%s","stake":"2"}]`, a, a),
		fmt.Sprintf(`[{"address":"%s","stake":"115792089237316195423570985008687907853269984665640564039457584007913129639936"}]`, a),
		fmt.Sprintf(`[{"address":"%s","stake":"1"}] []`, a),
	}
	for _, s := range bad {
		if _, err := SelectFromJSON(seed, 1, []byte(s)); !errors.Is(err, ErrBadCandidates) {
			t.Errorf("%s: want ErrBadCandidates, got %v", s, err)
		}
	}
}

func FuzzSelectFromJSON(f *testing.F) {
	f.Add([]byte(fmt.Sprintf(`[{"address":"%s","stake":"1"},{"address":"%s","stake":"20000000000000000000000"}]`, addrN(1), addrN(2))), uint8(1), uint64(3))
	f.Add([]byte(`[]`), uint8(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, m uint8, s uint64) {
		seed := types.Keccak256(binary.LittleEndian.AppendUint64(nil, s))
		got, err := SelectFromJSON(seed, int(m), data)
		if err != nil {
			return
		}
		stakes, err := ParseStakesJSON(data)
		if err != nil {
			t.Fatalf("SelectFromJSON accepted what ParseStakesJSON rejects: %v", err)
		}
		if want := refSelect(seed, stakes, int(m)); !slices.Equal(got, want) {
			t.Fatalf("got %v, reference %v", got, want)
		}
		seen := map[types.Address]bool{}
		for _, a := range got {
			if seen[a] {
				t.Fatalf("duplicate selection %s", a)
			}
			seen[a] = true
		}
	})
}

// --- benchmarks -------------------------------------------------------------

func benchStakes(n int) []Stake {
	s := make([]Stake, n)
	for i := range s {
		s[i] = Stake{Address: addrN(i), Stake: cby(int64(10_000 + 1_000*i))}
	}
	_ = SortStakes(s)
	return s
}

// BenchmarkSelect selects M = 5 of N candidates (the work the Job Dispatcher
// and every verifier repeat per job); BenchmarkKeccakBaseline hashes N 40-byte
// messages, the cost of merely touching each candidate once with keccak.
func BenchmarkSelect(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		cands := benchStakes(n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			seed := types.Keccak256([]byte("bench"))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Select(seed, cands, 5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkKeccakBaseline(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var buf [40]byte
			for b.Loop() {
				for i := 0; i < n; i++ {
					binary.LittleEndian.PutUint64(buf[32:], uint64(i))
					_ = types.Keccak256(buf[:])
				}
			}
		})
	}
}
