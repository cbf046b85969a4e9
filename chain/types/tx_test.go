package types

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

func vector1() TxData {
	to, _ := ParseAddress("0x1111111111111111111111111111111111111111")
	return TxData{
		ChainID: 1, Nonce: 0, To: &to, Value: big.NewInt(1),
		CyclesLimit: 21000, CellsLimit: 0,
		MaxFeePerCycle: 10, MaxFeePerCell: 2, TipPerCycle: 1, TipPerCell: 0,
		AccessList: nil, Payload: Bytes{}, Signature: nil,
	}
}

// Hand-assembled from RFC 8949 major types; see Appendix A of spec 002.
const vector1Hex = "8d" + "01" + "00" + "54" + "1111111111111111111111111111111111111111" +
	"01" + "195208" + "00" + "0a" + "02" + "01" + "00" + "f6" + "40" + "f6"

func TestAppendixAVector1(t *testing.T) {
	tx, err := NewTx(vector1())
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(tx.Encode()); got != vector1Hex {
		t.Fatalf("vector 1 encoding\n got %s\nwant %s", got, vector1Hex)
	}
	want := crypto.Keccak256Hash(mustHex(t, vector1Hex))
	if tx.SigningHash() != Hash(want) {
		t.Fatalf("signing hash %s, want %s", tx.SigningHash(), Hash(want))
	}
	if tx.Hash() != tx.SigningHash() {
		t.Fatal("unsigned tx hash must equal its signing hash")
	}
}

func TestAppendixAVector2(t *testing.T) {
	d := vector1()
	d.Signature = &Signature{YParity: 0}
	copy(d.Signature.R[:], bytes.Repeat([]byte{1}, 32))
	copy(d.Signature.S[:], bytes.Repeat([]byte{2}, 32))
	tx, err := NewTx(d)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(vector1Hex, "f6") + "83" + "00" +
		"5820" + strings.Repeat("01", 32) + "5820" + strings.Repeat("02", 32)
	if got := hex.EncodeToString(tx.Encode()); got != want {
		t.Fatalf("vector 2 encoding\n got %s\nwant %s", got, want)
	}
	// The signing hash ignores the signature: it equals vector 1's.
	v1, _ := NewTx(vector1())
	if tx.SigningHash() != v1.SigningHash() {
		t.Fatal("signing hash must not depend on the signature")
	}
	back, err := DecodeTx(tx.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Encode(), tx.Encode()) {
		t.Fatal("round trip changed bytes")
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignRecover(t *testing.T) {
	key, _ := crypto.GenerateKey()
	tx, _ := NewTx(vector1())
	signed, err := SignTx(tx, key)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeTx(signed.Encode())
	if err != nil {
		t.Fatal(err)
	}
	from, err := back.Sender()
	if err != nil {
		t.Fatal(err)
	}
	if from != PubkeyToAddress(key.PublicKey) {
		t.Fatalf("recovered %s", from)
	}
	if err := ValidateBasic(back, 1); err != nil {
		t.Fatal(err)
	}
	if err := ValidateBasic(back, 2); !errors.Is(err, ErrWrongChainID) {
		t.Fatalf("wrong chain: %v", err)
	}
	// Tampering with any signed field changes the recovered sender.
	d := back.Data()
	d.Value = big.NewInt(2)
	tampered, _ := NewTx(d)
	if who, err := tampered.Sender(); err == nil && who == from {
		t.Fatal("tampered tx still recovers the signer")
	}
	// High-s twin of a valid signature is rejected (malleability).
	d = back.Data()
	s := new(big.Int).SetBytes(d.Signature.S[:])
	s.Sub(crypto.S256().Params().N, s)
	s.FillBytes(d.Signature.S[:])
	d.Signature.YParity ^= 1
	twin, _ := NewTx(d)
	if _, err := twin.Sender(); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("high-s signature: %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := mustHex(t, vector1Hex)
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"empty":             {nil, ErrMalformedTx},
		"not an array":      {[]byte{0x01}, ErrMalformedTx},
		"short array":       {mustHex(t, "8c"+vector1Hex[2:len(vector1Hex)-2]), ErrMalformedTx},
		"trailing byte":     {append(append([]byte{}, good...), 0x00), ErrMalformedTx},
		"non-minimal nonce": {mustHex(t, "8d0118"+"00"+vector1Hex[6:]), ErrNonCanonicalTx},
		"indefinite array":  {mustHex(t, "9f"+vector1Hex[2:]+"ff"), ErrMalformedTx},
		"19-byte to":        {mustHex(t, "8d010053"+strings.Repeat("11", 19)+vector1Hex[48:]), ErrMalformedTx},
		"null payload":      {mustHex(t, vector1Hex[:len(vector1Hex)-4]+"f6f6"), ErrMalformedTx},
		"negative value":    {mustHex(t, vector1Hex[:48]+"20"+vector1Hex[50:]), ErrMalformedTx},
		"too large":         {make([]byte, MaxTxSize+1), ErrTxTooLarge},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeTx(c.in)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	if _, err := DecodeTx(good); err != nil {
		t.Fatalf("good vector rejected: %v", err)
	}
}

func TestCanonicalSourceAndActorAddress(t *testing.T) {
	a, _ := CanonicalSource([]byte("\xef\xbb\xbfx = 'e\u0301'\r\ny = 1\r"))
	if string(a) != "x = '\u00e9'\ny = 1\n" {
		t.Fatalf("canonical source %q", a)
	}
	if _, err := CanonicalSource([]byte{0xff}); !errors.Is(err, ErrBadSource) {
		t.Fatalf("invalid utf-8: %v", err)
	}
	creator, _ := ParseAddress("0x00000000000000000000000000000000000000aa")
	h := CodeHash(a)
	addr := ActorAddress(creator, []byte("salt"), h)
	want := crypto.Keccak256(creator[:], []byte("salt"), h[:])[12:]
	if !bytes.Equal(addr[:], want) {
		t.Fatal("actor address derivation")
	}
	if !SystemAddress(0x0B).IsReserved() || !SystemAddress(0x100).IsReserved() || SystemAddress(0x101).IsReserved() {
		t.Fatal("reserved range")
	}
}

func TestInstructionRoundTrip(t *testing.T) {
	for _, in := range []Instruction{
		&Call{Handler: "inc", Args: Bytes{0xa0}},
		&Deploy{Code: Bytes("class Actor: pass"), Salt: Bytes("s"), InitHandler: "init", InitArgs: Bytes{0xa0}},
		&PublishLibrary{Name: "engine", Code: Bytes("VERSION = 1")},
		&RemoveLibrary{Name: "engine"},
	} {
		b, err := EncodeInstruction(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DecodeInstruction(b)
		if err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		if out.InstructionKind() != in.InstructionKind() {
			t.Fatalf("kind %v != %v", out.InstructionKind(), in.InstructionKind())
		}
	}
	for _, bad := range [][]byte{{0x01}, {0x80}, {0x81, 0x09}, {0x82, 0x01, 0x01}} {
		if _, err := DecodeInstruction(bad); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("%x: %v", bad, err)
		}
	}
}

func TestMerkleRoot(t *testing.T) {
	if MerkleRoot(nil) != (Hash{}) {
		t.Fatal("empty root")
	}
	a, b, c := Keccak256([]byte("a")), Keccak256([]byte("b")), Keccak256([]byte("c"))
	la, lb, lc := Keccak256([]byte{0}, a[:]), Keccak256([]byte{0}, b[:]), Keccak256([]byte{0}, c[:])
	ab := Keccak256([]byte{1}, la[:], lb[:])
	if MerkleRoot([]Hash{a, b, c}) != Keccak256([]byte{1}, ab[:], lc[:]) {
		t.Fatal("three-leaf root")
	}
}
