package types

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// TestSigningHashFastPath checks that SigningHash, which hashes the stored
// encoding with the signature element replaced by null, equals the
// definition (re-encoding the fields with a null signature) for signed and
// unsigned transactions of every shape, decoded or built.
func TestSigningHashFastPath(t *testing.T) {
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	to, _ := ParseAddress("0x1111111111111111111111111111111111111111")
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	shapes := map[string]TxData{
		"transfer": vector1(),
		"create":   {ChainID: 7, Nonce: 1 << 40, Value: huge, CyclesLimit: 1 << 33, Payload: Bytes(make([]byte, 300))},
		"access": {ChainID: 1, Nonce: 24, To: &to, Value: big.NewInt(0), MaxFeePerCycle: 1 << 20,
			AccessList: []AccessTuple{{Address: to, StorageKeys: []Bytes{{1, 2}, {}}}}, Payload: Bytes{0xff}},
	}
	for name, d := range shapes {
		tx, err := NewTx(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := tx.SigningHash(), tx.slowSigningHash(); got != want {
			t.Fatalf("%s unsigned: fast %s, definition %s", name, got, want)
		}
		for i := range 8 { // both y parities show up over a few signatures
			d.Nonce++
			u, _ := NewTx(d)
			signed, err := SignTx(u, key)
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeTx(signed.Encode())
			if err != nil {
				t.Fatalf("%s #%d: %v", name, i, err)
			}
			if got, want := back.SigningHash(), back.slowSigningHash(); got != want {
				t.Fatalf("%s #%d signed: fast %s, definition %s", name, i, got, want)
			}
			if got := back.SigningHash(); got != u.SigningHash() {
				t.Fatalf("%s #%d: signed tx's signing hash %s differs from the unsigned tx's %s", name, i, got, u.SigningHash())
			}
			if from, err := back.Sender(); err != nil || from != PubkeyToAddress(key.PublicKey) {
				t.Fatalf("%s #%d: sender %s, %v", name, i, from, err)
			}
		}
	}
}

// TestIsSignatureEncoding checks the fast path's recognizer against the
// codec's encoding of a signature and rejects near misses.
func TestIsSignatureEncoding(t *testing.T) {
	s := &Signature{YParity: 1}
	s.R[0], s.S[31] = 0x80, 0x01
	tx, _ := NewTx(TxData{Value: big.NewInt(0), Payload: Bytes{}, Signature: s})
	enc := tx.Encode()
	tail := enc[len(enc)-signatureEncodedLen:]
	if !isSignatureEncoding(tail, s) {
		t.Fatalf("codec's encoding %x not recognised", tail)
	}
	other := *s
	other.S[0] = 9
	if isSignatureEncoding(tail, &other) {
		t.Fatal("encoding matched a different signature")
	}
	if isSignatureEncoding(tail[1:], s) {
		t.Fatal("short input matched")
	}
}

func BenchmarkSigningHash(b *testing.B) {
	key, _ := crypto.GenerateKey()
	u, _ := NewTx(vector1())
	tx, _ := SignTx(u, key)
	b.Run("fast", func(b *testing.B) {
		for range b.N {
			_ = tx.SigningHash()
		}
	})
	b.Run("reencode", func(b *testing.B) {
		for range b.N {
			_ = tx.slowSigningHash()
		}
	})
}
