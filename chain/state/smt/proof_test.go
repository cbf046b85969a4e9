package smt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

type proofCase struct {
	name  string
	key   []byte
	value []byte // nil for exclusion
	proof *Proof
}

// proofFixture builds a tree and returns one proof of each kind.
func proofFixture(t *testing.T) ([32]byte, *Tree, []proofCase) {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	pairs := randPairs(r, 300)
	tr := buildTree(t, NewMemStore(), pairs)
	root := mustCommit(t, tr)
	var cases []proofCase
	var haveIncl, haveEmpty, haveLeaf bool
	for _, k := range sortedKeys(pairs) {
		if haveIncl {
			break
		}
		p, err := tr.Prove([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, proofCase{"inclusion", []byte(k), pairs[k], p})
		haveIncl = true
	}
	for i := 0; !haveEmpty || !haveLeaf; i++ {
		k := []byte(fmt.Sprintf("absent-%d", i))
		p, err := tr.Prove(k)
		if err != nil {
			t.Fatal(err)
		}
		if p.Leaf == nil && !haveEmpty {
			cases = append(cases, proofCase{"exclusion-empty", k, nil, p})
			haveEmpty = true
		}
		if p.Leaf != nil && !haveLeaf {
			cases = append(cases, proofCase{"exclusion-leaf", k, nil, p})
			haveLeaf = true
		}
	}
	return root, tr, cases
}

func TestProofsVerify(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	pairs := randPairs(r, 1000)
	tr := buildTree(t, NewMemStore(), pairs)
	root := tr.Root() // proofs work on uncommitted state too
	for k, v := range pairs {
		p, err := tr.Prove([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if p.Leaf != nil {
			t.Fatalf("inclusion proof for %x carries a leaf", k)
		}
		if err := VerifyProof(root, []byte(k), v, p); err != nil {
			t.Fatalf("inclusion %x: %v", k, err)
		}
		// The same proof cannot prove absence.
		if err := VerifyProof(root, []byte(k), nil, p); !errors.Is(err, ErrInvalidProof) {
			t.Fatalf("inclusion proof accepted as exclusion: %v", err)
		}
	}
	counts := map[string]int{}
	for i := range 2000 {
		k := []byte(fmt.Sprintf("absent-%d", i))
		p, err := tr.Prove(k)
		if err != nil {
			t.Fatal(err)
		}
		kind := "empty"
		if p.Leaf != nil {
			kind = "leaf"
		}
		counts[kind]++
		if err := VerifyProof(root, k, nil, p); err != nil {
			t.Fatalf("exclusion (%s) %x: %v", kind, k, err)
		}
		if err := VerifyProof(root, k, []byte{}, p); err != nil {
			t.Fatalf("empty value must mean absence: %v", err)
		}
		if err := VerifyProof(root, k, []byte("x"), p); !errors.Is(err, ErrInvalidProof) {
			t.Fatalf("exclusion proof accepted as inclusion: %v", err)
		}
	}
	if counts["empty"] == 0 || counts["leaf"] == 0 {
		t.Fatalf("exclusion cases not both exercised: %v", counts)
	}
	t.Logf("exclusion proofs: %v", counts)
}

func TestProofSingleLeafAndEmpty(t *testing.T) {
	tr := New(NewMemStore(), EmptyRoot)
	mustUpdate(t, tr, []byte("only"), []byte("one"))
	root := tr.Root()
	p, err := tr.Prove([]byte("only"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Depth != 0 || len(p.Bitmap) != 0 || len(p.Siblings) != 0 {
		t.Fatalf("single-leaf proof not trivial: %+v", p)
	}
	if err := VerifyProof(root, []byte("only"), []byte("one"), p); err != nil {
		t.Fatal(err)
	}
	p, err = tr.Prove([]byte("other"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Leaf == nil || p.Depth != 0 {
		t.Fatalf("exclusion against single leaf: %+v", p)
	}
	if err := VerifyProof(root, []byte("other"), nil, p); err != nil {
		t.Fatal(err)
	}
}

// flipBit returns a copy of b with bit i flipped.
func flipBit(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i/8] ^= 0x80 >> (i % 8)
	return c
}

func cloneProof(p *Proof) *Proof {
	q := &Proof{Depth: p.Depth, Bitmap: bytes.Clone(p.Bitmap), Siblings: append([][32]byte(nil), p.Siblings...)}
	if p.Leaf != nil {
		l := *p.Leaf
		q.Leaf = &l
	}
	return q
}

func expectReject(t *testing.T, what string, root [32]byte, key, value []byte, p *Proof) {
	t.Helper()
	err := VerifyProof(root, key, value, p)
	if err == nil {
		t.Fatalf("%s: tampered proof verified", what)
	}
	if !errors.Is(err, ErrInvalidProof) {
		t.Fatalf("%s: error %v does not wrap ErrInvalidProof", what, err)
	}
}

func TestProofTampering(t *testing.T) {
	root, tr, cases := proofFixture(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := VerifyProof(root, c.key, c.value, c.proof); err != nil {
				t.Fatalf("untampered proof: %v", err)
			}
			// Wrong root: every bit.
			for i := range 256 {
				expectReject(t, "root bit", [32]byte(flipBit(root[:], i)), c.key, c.value, c.proof)
			}
			// Wrong key: every bit of the key, plus another key. An
			// exclusion proof legitimately also proves the absence of any
			// other absent key whose path runs into the same terminal node,
			// so acceptance is an error only if that does not hold.
			wrongKeys := [][]byte{append(bytes.Clone(c.key), 0)}
			for i := range len(c.key) * 8 {
				wrongKeys = append(wrongKeys, flipBit(c.key, i))
			}
			for _, k := range wrongKeys {
				if c.value == nil && VerifyProof(root, k, nil, c.proof) == nil {
					path, keyPath := crypto.Keccak256Hash(k), crypto.Keccak256Hash(c.key)
					_, found, err := tr.Get(k)
					if err != nil || found || commonPrefixLen((*[32]byte)(&path), (*[32]byte)(&keyPath)) < c.proof.Depth {
						t.Fatalf("exclusion proof accepted for key %x that it does not cover", k)
					}
					continue
				}
				expectReject(t, "wrong key", root, k, c.value, c.proof)
			}
			// Value: every bit; for exclusion, any value claims inclusion.
			if c.value != nil {
				for i := range len(c.value) * 8 {
					expectReject(t, "value bit", root, c.key, flipBit(c.value, i), c.proof)
				}
				expectReject(t, "value suffix", root, c.key, append(bytes.Clone(c.value), 0), c.proof)
				expectReject(t, "absence", root, c.key, nil, c.proof)
			} else {
				expectReject(t, "presence", root, c.key, []byte{0}, c.proof)
			}
			// Siblings: every bit of every sibling.
			for s := range c.proof.Siblings {
				for i := range 256 {
					p := cloneProof(c.proof)
					p.Siblings[s] = [32]byte(flipBit(p.Siblings[s][:], i))
					expectReject(t, fmt.Sprintf("sibling %d bit %d", s, i), root, c.key, c.value, p)
				}
			}
			// Sibling removed, duplicated, reordered.
			if n := len(c.proof.Siblings); n > 0 {
				p := cloneProof(c.proof)
				p.Siblings = p.Siblings[:n-1]
				expectReject(t, "sibling dropped", root, c.key, c.value, p)
				p = cloneProof(c.proof)
				p.Siblings = append(p.Siblings, p.Siblings[0])
				expectReject(t, "sibling added", root, c.key, c.value, p)
				if n > 1 {
					p = cloneProof(c.proof)
					p.Siblings[0], p.Siblings[1] = p.Siblings[1], p.Siblings[0]
					expectReject(t, "siblings swapped", root, c.key, c.value, p)
				}
				p = cloneProof(c.proof)
				p.Siblings[0] = [32]byte{}
				expectReject(t, "zero sibling", root, c.key, c.value, p)
			}
			// Bitmap: every bit (including padding).
			for i := range len(c.proof.Bitmap) * 8 {
				p := cloneProof(c.proof)
				p.Bitmap = flipBit(p.Bitmap, i)
				expectReject(t, fmt.Sprintf("bitmap bit %d", i), root, c.key, c.value, p)
			}
			// Depth changes.
			for _, d := range []int{-1, 1, 8, -c.proof.Depth - 1, 257} {
				p := cloneProof(c.proof)
				p.Depth += d
				expectReject(t, fmt.Sprintf("depth %+d", d), root, c.key, c.value, p)
			}
			// Leaf: every bit, removal, addition.
			if c.proof.Leaf != nil {
				for i := range 256 {
					p := cloneProof(c.proof)
					p.Leaf.Path = [32]byte(flipBit(p.Leaf.Path[:], i))
					expectReject(t, "leaf path bit", root, c.key, c.value, p)
					p = cloneProof(c.proof)
					p.Leaf.ValueHash = [32]byte(flipBit(p.Leaf.ValueHash[:], i))
					expectReject(t, "leaf value hash bit", root, c.key, c.value, p)
				}
				p := cloneProof(c.proof)
				p.Leaf = nil
				expectReject(t, "leaf removed", root, c.key, c.value, p)
				// Claiming the key's own path as the other leaf.
				p = cloneProof(c.proof)
				p.Leaf.Path = crypto.Keccak256Hash(c.key)
				expectReject(t, "leaf is the key", root, c.key, c.value, p)
			} else {
				p := cloneProof(c.proof)
				p.Leaf = &ProofLeaf{Path: crypto.Keccak256Hash([]byte("x")), ValueHash: [32]byte{1}}
				expectReject(t, "leaf added", root, c.key, c.value, p)
			}
			expectReject(t, "nil proof", root, c.key, c.value, nil)
		})
	}
}

func TestProofCBORRoundTrip(t *testing.T) {
	root, tr, cases := proofFixture(t)
	empty, err := New(NewMemStore(), EmptyRoot).Prove([]byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, proofCase{"empty-tree", []byte("k"), nil, empty})
	for _, c := range cases {
		enc, err := c.proof.MarshalCBOR()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		dec, err := DecodeProof(enc)
		if err != nil {
			t.Fatalf("%s: decode: %v", c.name, err)
		}
		again, err := dec.MarshalCBOR()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, again) {
			t.Fatalf("%s: CBOR round trip differs:\n%x\n%x", c.name, enc, again)
		}
		r := root
		if c.name == "empty-tree" {
			r = EmptyRoot
		}
		if err := VerifyProof(r, c.key, c.value, dec); err != nil {
			t.Fatalf("%s: decoded proof does not verify: %v", c.name, err)
		}
		// Proofs embed in other CBOR structures through the Marshaler interfaces.
		type envelope struct {
			Height uint64 `cbor:"1,keyasint"`
			Proof  *Proof `cbor:"2,keyasint"`
		}
		encEnv, err := proofEncMode.Marshal(envelope{7, c.proof})
		if err != nil {
			t.Fatal(err)
		}
		var env envelope
		if err := proofDecMode.Unmarshal(encEnv, &env); err != nil {
			t.Fatalf("%s: envelope: %v", c.name, err)
		}
		if err := VerifyProof(r, c.key, c.value, env.Proof); err != nil {
			t.Fatalf("%s: proof from envelope: %v", c.name, err)
		}

		// JSON round trip.
		js, err := json.Marshal(c.proof)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON Proof
		if err := json.Unmarshal(js, &fromJSON); err != nil {
			t.Fatalf("%s: json decode %s: %v", c.name, js, err)
		}
		js2, err := json.Marshal(&fromJSON)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(js, js2) {
			t.Fatalf("%s: JSON round trip differs:\n%s\n%s", c.name, js, js2)
		}
		if err := VerifyProof(r, c.key, c.value, &fromJSON); err != nil {
			t.Fatalf("%s: JSON proof does not verify: %v", c.name, err)
		}
		if c.name == "exclusion-leaf" && !strings.Contains(string(js), `"valueHash":"0x`) {
			t.Fatalf("JSON lacks leaf: %s", js)
		}
	}
	_ = tr
}

func TestProofJSONShape(t *testing.T) {
	p := &Proof{
		Depth:    3,
		Bitmap:   []byte{0xa0},
		Siblings: [][32]byte{{0xaa}, {0xbb}},
		Leaf:     &ProofLeaf{Path: [32]byte{0x01}, ValueHash: [32]byte{0x02}},
	}
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	z := strings.Repeat("0", 62)
	want := `{"depth":3,"bitmap":"0xa0","siblings":["0xaa` + z + `","0xbb` + z + `"],"leaf":{"path":"0x01` + z + `","valueHash":"0x02` + z + `"}}`
	if string(js) != want {
		t.Fatalf("JSON =\n%s\nwant\n%s", js, want)
	}
	js, err = json.Marshal(Proof{Bitmap: []byte{}}) // value form works too
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != `{"depth":0,"bitmap":"0x","siblings":[]}` {
		t.Fatalf("empty proof JSON = %s", js)
	}
	for _, bad := range []string{
		`{"depth":3,"bitmap":"a0","siblings":["0xaa` + z + `","0xbb` + z + `"]}`,         // no 0x
		`{"depth":3,"bitmap":"0xa0","siblings":["0xaa` + z + `"]}`,                       // count mismatch
		`{"depth":3,"bitmap":"0xa1","siblings":["0xaa` + z + `","0xbb` + z + `"]}`,       // padding bit
		`{"depth":3,"bitmap":"0xa0","siblings":["0xaa","0xbb` + z + `"]}`,                // short sibling
		`{"depth":3,"bitmap":"0xa0","siblings":["0xaa` + z + `","0xbb` + z + `"],"x":1}`, // unknown field
		`{"depth":300,"bitmap":"0x","siblings":[]}`,
		`{"depth":0,"bitmap":"0x","siblings":[],"leaf":{"path":"0x01","valueHash":"0x02"}}`,
	} {
		var p Proof
		if err := json.Unmarshal([]byte(bad), &p); !errors.Is(err, ErrMalformedProof) {
			t.Fatalf("accepted or wrong error for %s: %v", bad, err)
		}
	}
}

// TestProofCBORLayout pins the wire layout of a small proof.
func TestProofCBORLayout(t *testing.T) {
	p := &Proof{Depth: 3, Bitmap: []byte{0x20}, Siblings: [][32]byte{{0xaa}}}
	enc, err := p.MarshalCBOR()
	if err != nil {
		t.Fatal(err)
	}
	want := "84" + "03" + "4120" + "81" + "5820aa" + strings.Repeat("00", 31) + "f6"
	if fmt.Sprintf("%x", enc) != want {
		t.Fatalf("CBOR = %x\nwant   %s", enc, want)
	}
	p.Leaf = &ProofLeaf{Path: [32]byte{1}, ValueHash: [32]byte{2}}
	enc, err = p.MarshalCBOR()
	if err != nil {
		t.Fatal(err)
	}
	want = "84" + "03" + "4120" + "81" + "5820aa" + strings.Repeat("00", 31) +
		"82" + "582001" + strings.Repeat("00", 31) + "582002" + strings.Repeat("00", 31)
	if fmt.Sprintf("%x", enc) != want {
		t.Fatalf("CBOR = %x\nwant   %s", enc, want)
	}
}

func TestProofNonCanonicalCBORRejected(t *testing.T) {
	sib := "5820aa" + strings.Repeat("00", 31)
	good := "84" + "03" + "4120" + "81" + sib + "f6"
	if _, err := DecodeProof(mustHex(t, good)); err != nil {
		t.Fatalf("canonical proof rejected: %v", err)
	}
	bad := map[string]string{
		"non-minimal depth":         "84" + "1803" + "4120" + "81" + sib + "f6",
		"non-minimal array length":  "9804" + "03" + "4120" + "81" + sib + "f6",
		"non-minimal bstr length":   "84" + "03" + "580120" + "81" + sib + "f6",
		"non-minimal sibling len":   "84" + "03" + "4120" + "81" + "590020aa" + strings.Repeat("00", 31) + "f6",
		"indefinite outer array":    "9f" + "03" + "4120" + "81" + sib + "f6" + "ff",
		"indefinite siblings":       "84" + "03" + "4120" + "9f" + sib + "ff" + "f6",
		"indefinite bitmap":         "84" + "03" + "5f4120ff" + "81" + sib + "f6",
		"trailing byte":             good + "00",
		"undefined instead of null": "84" + "03" + "4120" + "81" + sib + "f7",
		"null siblings":             "84" + "00" + "40" + "f6" + "f6",
		"null bitmap":               "84" + "00" + "f6" + "80" + "f6",
		"tagged":                    "d818" + good,
		"3-element array":           "83" + "03" + "4120" + "81" + sib,
		"5-element array":           "85" + "03" + "4120" + "81" + sib + "f6" + "f6",
		"map":                       "a4" + "00" + "03" + "01" + "4120" + "02" + "81" + sib + "03" + "f6",
		"padding bit set":           "84" + "03" + "4121" + "81" + sib + "f6",
		"bitmap too long":           "84" + "03" + "422000" + "81" + sib + "f6",
		"count mismatch":            "84" + "03" + "4160" + "81" + sib + "f6",
		"short sibling":             "84" + "03" + "4120" + "81" + "581faa" + strings.Repeat("00", 30) + "f6",
		"zero sibling":              "84" + "03" + "4120" + "81" + "5820" + strings.Repeat("00", 32) + "f6",
		"depth too large":           "84" + "190101" + "5821" + strings.Repeat("00", 33) + "80" + "f6",
		"negative depth":            "84" + "20" + "40" + "80" + "f6",
		"text bitmap":               "84" + "03" + "6120" + "81" + sib + "f6",
		"short leaf path":           "84" + "00" + "40" + "80" + "82" + "5801aa" + "5820" + strings.Repeat("11", 32),
		"empty input":               "",
	}
	for name, h := range bad {
		if _, err := DecodeProof(mustHex(t, h)); !errors.Is(err, ErrMalformedProof) {
			t.Errorf("%s: err = %v, want ErrMalformedProof", name, err)
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	var b []byte
	if _, err := fmt.Sscanf(s, "%x", &b); err != nil && s != "" {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}
