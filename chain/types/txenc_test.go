package types

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

// TestAppendTxDataMatchesCodec checks the reflection-free encoder against
// the codec, the definition, over random transactions built from the
// values at every CBOR head-size boundary, nil and empty lists and byte
// strings, and big values on both sides of 64 bits.
func TestAppendTxDataMatchesCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	edges := []uint64{0, 1, 23, 24, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1<<64 - 1}
	num := func() uint64 {
		if rng.IntN(3) == 0 {
			return rng.Uint64() >> rng.IntN(64)
		}
		return edges[rng.IntN(len(edges))]
	}
	bytesOf := func() Bytes {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return Bytes{}
		}
		n := []int{1, 23, 24, 255, 256, 300}[rng.IntN(6)]
		p := make(Bytes, n)
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		return p
	}
	value := func() *big.Int {
		switch rng.IntN(3) {
		case 0:
			return new(big.Int).SetUint64(num())
		case 1:
			v := new(big.Int).Lsh(big.NewInt(1), uint(64+rng.IntN(130)))
			return v.Add(v, new(big.Int).SetUint64(num()))
		}
		return new(big.Int).Lsh(big.NewInt(1), 64) // the first value past uint64
	}
	for i := range 3000 {
		d := TxData{ChainID: num(), Nonce: num(), Value: value(), CyclesLimit: num(), CellsLimit: num(),
			MaxFeePerCycle: num(), MaxFeePerCell: num(), TipPerCycle: num(), TipPerCell: num(), Payload: bytesOf()}
		if rng.IntN(2) == 0 {
			to := Address{byte(i), 0xaa}
			d.To = &to
		}
		if n := rng.IntN(4); n > 0 {
			d.AccessList = make([]AccessTuple, n-1) // an empty list sometimes
			for j := range d.AccessList {
				d.AccessList[j].Address = Address{byte(j)}
				if k := rng.IntN(4); k > 0 {
					d.AccessList[j].StorageKeys = make([]Bytes, k-1)
					for x := range d.AccessList[j].StorageKeys {
						d.AccessList[j].StorageKeys[x] = bytesOf()
					}
				}
			}
		}
		if rng.IntN(3) > 0 {
			s := &Signature{YParity: uint8(rng.IntN(2))}
			s.R[0], s.S[31] = byte(i), byte(i>>8)
			d.Signature = s
		}
		want, err := codec.Marshal(&d)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendTxData(nil, &d)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("#%d %+v:\nappendTxData %x (ok=%v)\ncodec        %x", i, d, got, ok, want)
		}
	}
	// Values the codec encodes but a transaction never carries fall back.
	for _, v := range []*big.Int{nil, big.NewInt(-1)} {
		if _, ok := appendTxData(nil, &TxData{Value: v}); ok {
			t.Fatalf("value %v: want the codec fallback", v)
		}
	}
}

func BenchmarkDecodeTx(b *testing.B) {
	tx, _ := NewTx(vector1())
	enc := tx.Encode()
	b.ReportAllocs()
	for range b.N {
		if _, err := DecodeTx(enc); err != nil {
			b.Fatal(err)
		}
	}
}
