package smt

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/vectors.json")

// vectorFile is the cross-implementation test vector format (SDKs can check
// their verifier and decoder against it).
type vectorFile struct {
	Description string        `json:"description"`
	Pairs       []vectorPair  `json:"pairs"`
	Root        string        `json:"root"`
	Proofs      []vectorProof `json:"proofs"`
}

type vectorPair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type vectorProof struct {
	Kind  string          `json:"kind"`
	Key   string          `json:"key"`
	Value *string         `json:"value"` // null for exclusion
	CBOR  string          `json:"cbor"`
	Proof json.RawMessage `json:"proof"`
}

func knownAnswerPairs() map[string][]byte {
	pairs := map[string][]byte{}
	for i := range 16 {
		pairs[fmt.Sprintf("account/%d", i)] = []byte(fmt.Sprintf("balance=%d", i*i*1000))
	}
	pairs[""] = []byte{0x00}
	pairs["cowboy"] = bytes.Repeat([]byte{0xAB}, 100)
	return pairs
}

func buildVectors(t *testing.T) vectorFile {
	pairs := knownAnswerPairs()
	tr := buildTree(t, NewMemStore(), pairs)
	root := mustCommit(t, tr)
	vf := vectorFile{
		Description: "chain/state/smt test vectors: root of the pairs and canonical proofs (CBOR hex and JSON); " +
			"see the package documentation for the hashing scheme and encodings",
		Root: hex0x(root[:]),
	}
	keys := sortedKeys(pairs)
	for _, k := range keys {
		vf.Pairs = append(vf.Pairs, vectorPair{hex0x([]byte(k)), hex0x(pairs[k])})
	}
	add := func(kind string, k []byte, v []byte) {
		p, err := tr.Prove(k)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := p.MarshalCBOR()
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		vp := vectorProof{Kind: kind, Key: hex0x(k), CBOR: hex0x(enc), Proof: js}
		if v != nil {
			s := hex0x(v)
			vp.Value = &s
		}
		vf.Proofs = append(vf.Proofs, vp)
	}
	for _, k := range []string{"", "account/3", "cowboy"} {
		add("inclusion", []byte(k), pairs[k])
	}
	var haveEmpty, haveLeaf int
	for i := 0; haveEmpty < 2 || haveLeaf < 2; i++ {
		k := []byte(fmt.Sprintf("absent/%d", i))
		p, err := tr.Prove(k)
		if err != nil {
			t.Fatal(err)
		}
		if p.Leaf == nil && haveEmpty < 2 {
			add("exclusion-empty", k, nil)
			haveEmpty++
		} else if p.Leaf != nil && haveLeaf < 2 {
			add("exclusion-leaf", k, nil)
			haveLeaf++
		}
	}
	return vf
}

func TestVectors(t *testing.T) {
	path := filepath.Join("testdata", "vectors.json")
	got := buildVectors(t)
	if *updateVectors {
		out, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want vectorFile
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	// The stored vectors are checked on their own terms (as an SDK would)...
	root, err := unhex0x(want.Root, 32)
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[string][]byte{}
	for _, p := range want.Pairs {
		k, err1 := unhex0x(p.Key, -1)
		v, err2 := unhex0x(p.Value, -1)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		pairs[string(k)] = v
	}
	if ref := refRoot(pairs); !bytes.Equal(ref[:], root) {
		t.Fatalf("vector root %x != reference root %x", root, ref)
	}
	for _, vp := range want.Proofs {
		k, _ := unhex0x(vp.Key, -1)
		var v []byte
		if vp.Value != nil {
			v, _ = unhex0x(*vp.Value, -1)
		}
		enc, _ := unhex0x(vp.CBOR, -1)
		p, err := DecodeProof(enc)
		if err != nil {
			t.Fatalf("%s %s: decode: %v", vp.Kind, vp.Key, err)
		}
		if err := VerifyProof([32]byte(root), k, v, p); err != nil {
			t.Fatalf("%s %s: %v", vp.Kind, vp.Key, err)
		}
		var pj Proof
		if err := json.Unmarshal(vp.Proof, &pj); err != nil {
			t.Fatal(err)
		}
		if enc2, _ := pj.MarshalCBOR(); !bytes.Equal(enc, enc2) {
			t.Fatalf("%s %s: JSON and CBOR forms disagree", vp.Kind, vp.Key)
		}
	}
	// ...and must be exactly what this implementation produces.
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("testdata/vectors.json is stale or the scheme changed (consensus!); rerun with -update-vectors only if the change is intended")
	}
	if !slices.ContainsFunc(want.Proofs, func(p vectorProof) bool { return p.Kind == "exclusion-leaf" }) {
		t.Fatal("vectors lack an exclusion-leaf proof")
	}
}
