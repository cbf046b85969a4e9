package entitlement

import (
	"errors"
	"testing"
)

func TestEthRequirement(t *testing.T) {
	contract, topic := [20]byte{0xAB}, [32]byte{0xCD}
	param := EthEvent(1337, contract, &topic)
	r, err := ParseRequirement("eth:" + param)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Manifest{r}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if m, err = DecodeManifest(enc); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckEth("subscribe_event", 1337, contract, topic); err != nil {
		t.Fatalf("declared event refused: %v", err)
	}
	var miss *MissingError
	if err := m.CheckEth("subscribe_event", 1, contract, topic); !errors.As(err, &miss) {
		t.Fatalf("other chain: %v", err)
	}
	if err := m.CheckEth("subscribe_event", 1337, contract, [32]byte{0xEE}); !errors.As(err, &miss) {
		t.Fatalf("other event: %v", err)
	}
	// The wildcard covers every event of the contract, nothing else.
	w, err := ParseRequirement("eth:" + EthEvent(1337, contract, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := (Manifest{w}).CheckEth("e", 1337, contract, [32]byte{0xEE}); err != nil {
		t.Fatalf("wildcard: %v", err)
	}
	if err := (Manifest{w}).CheckEth("e", 1337, [20]byte{0x01}, topic); err == nil {
		t.Fatal("wildcard covers another contract")
	}
	for _, bad := range []string{"eth", "eth:1337", "eth:x:0x" + "ab" + "00:*", "eth:1337:0xab:*", "eth:1337:0x" + string(make([]byte, 0)) + ":*"} {
		if _, err := ParseRequirement(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
