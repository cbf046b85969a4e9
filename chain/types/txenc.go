package types

import "math/big"

// appendTxData appends d's canonical CBOR encoding to b without reflection.
// It covers every transaction the chain accepts; for anything else (a nil
// or negative value) it returns ok=false and the caller falls back to the
// codec, which stays the definition: TestAppendTxDataMatchesCodec checks
// the two agree byte for byte.
func appendTxData(b []byte, d *TxData) ([]byte, bool) {
	if d.Value == nil || d.Value.Sign() < 0 {
		return b, false
	}
	b = append(b, 0x80|13) // array of the 13 fields of spec 002 §2.5
	b = appendUint(b, 0, d.ChainID)
	b = appendUint(b, 0, d.Nonce)
	if d.To == nil {
		b = append(b, cborNull[0])
	} else {
		b = appendByteString(b, d.To[:])
	}
	b = appendBigUint(b, d.Value)
	for _, v := range [...]uint64{d.CyclesLimit, d.CellsLimit, d.MaxFeePerCycle, d.MaxFeePerCell, d.TipPerCycle, d.TipPerCell} {
		b = appendUint(b, 0, v)
	}
	if d.AccessList == nil {
		b = append(b, cborNull[0])
	} else {
		b = appendUint(b, 4, uint64(len(d.AccessList)))
		for _, t := range d.AccessList {
			b = append(b, 0x80|2)
			b = appendByteString(b, t.Address[:])
			if t.StorageKeys == nil {
				b = append(b, cborNull[0])
				continue
			}
			b = appendUint(b, 4, uint64(len(t.StorageKeys)))
			for _, k := range t.StorageKeys {
				b = appendByteString(b, k)
			}
		}
	}
	b = appendByteString(b, d.Payload)
	if s := d.Signature; s == nil {
		b = append(b, cborNull[0])
	} else {
		b = append(b, 0x80|3)
		b = appendUint(b, 0, uint64(s.YParity))
		b = appendByteString(b, s.R[:])
		b = appendByteString(b, s.S[:])
	}
	return b, true
}

// appendUint appends a CBOR head of major type major with argument n in
// its shortest form (RFC 8949 §4.2.1).
func appendUint(b []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(b, m|byte(n))
	case n <= 0xff:
		return append(b, m|24, byte(n))
	case n <= 0xffff:
		return append(b, m|25, byte(n>>8), byte(n))
	case n <= 0xffffffff:
		return append(b, m|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		return append(b, m|27, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// appendByteString appends p as a CBOR byte string (nil as the empty one).
func appendByteString(b, p []byte) []byte {
	return append(appendUint(b, 2, uint64(len(p))), p...)
}

// appendBigUint appends a non-negative integer the way the codec does
// (BigIntConvertShortest): a plain unsigned integer when it fits in 64
// bits, else tag 2 over its minimal big-endian bytes.
func appendBigUint(b []byte, v *big.Int) []byte {
	if v.IsUint64() {
		return appendUint(b, 0, v.Uint64())
	}
	return appendByteString(append(b, 0xc0|2), v.Bytes())
}
