package tx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// txFieldOrder is spec 002 §2.5's field list, the keys `tx encode` accepts.
var txFieldOrder = []string{"chain_id", "nonce", "to", "value", "cycles_limit", "cells_limit",
	"max_fee_per_cycle", "max_fee_per_cell", "tip_per_cycle", "tip_per_cell", "access_list", "payload", "signature"}

// parseTxJSON reads a transaction written as a JSON object keyed by the
// spec's field names. Integers may be JSON numbers or decimal strings; byte
// strings are 0x-hex; `to`, `access_list` and `signature` may be null.
func parseTxJSON(data []byte) (*types.Tx, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("transaction JSON: %w", err)
	}
	known := map[string]bool{}
	for _, k := range txFieldOrder {
		known[k] = true
	}
	var unknown []string
	for k := range obj {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("transaction JSON: unknown field(s) %s (fields are %s)", strings.Join(unknown, ", "), strings.Join(txFieldOrder, ", "))
	}
	for _, k := range []string{"chain_id", "nonce", "value", "cycles_limit", "cells_limit", "max_fee_per_cycle", "max_fee_per_cell", "tip_per_cycle", "tip_per_cell", "payload"} {
		if _, ok := obj[k]; !ok {
			return nil, fmt.Errorf("transaction JSON: missing field %q", k)
		}
	}
	var d types.TxData
	var err error
	u64 := func(k string) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = jsonUint(obj[k])
		if err != nil {
			err = fmt.Errorf("field %s: %w", k, err)
		}
		return v
	}
	d.ChainID = u64("chain_id")
	d.Nonce = u64("nonce")
	d.CyclesLimit = u64("cycles_limit")
	d.CellsLimit = u64("cells_limit")
	d.MaxFeePerCycle = u64("max_fee_per_cycle")
	d.MaxFeePerCell = u64("max_fee_per_cell")
	d.TipPerCycle = u64("tip_per_cycle")
	d.TipPerCell = u64("tip_per_cell")
	if err != nil {
		return nil, fmt.Errorf("transaction JSON: %w", err)
	}
	if d.Value, err = jsonBig(obj["value"]); err != nil {
		return nil, fmt.Errorf("transaction JSON: field value: %w", err)
	}
	if raw, ok := obj["to"]; ok && !isNull(raw) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("transaction JSON: field to: want a 0x address or null")
		}
		a, err := types.ParseAddress(s)
		if err != nil {
			return nil, fmt.Errorf("transaction JSON: field to: %w", err)
		}
		d.To = &a
	}
	if d.Payload, err = jsonHex(obj["payload"]); err != nil {
		return nil, fmt.Errorf("transaction JSON: field payload: %w", err)
	}
	if raw, ok := obj["access_list"]; ok && !isNull(raw) {
		var entries [][]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, fmt.Errorf("transaction JSON: field access_list: want null or [[address, [keys…]], …]")
		}
		d.AccessList = []types.AccessTuple{}
		for i, e := range entries {
			if len(e) != 2 {
				return nil, fmt.Errorf("transaction JSON: access_list[%d]: want [address, [keys…]]", i)
			}
			var s string
			if err := json.Unmarshal(e[0], &s); err != nil {
				return nil, fmt.Errorf("transaction JSON: access_list[%d]: address must be a string", i)
			}
			a, err := types.ParseAddress(s)
			if err != nil {
				return nil, fmt.Errorf("transaction JSON: access_list[%d]: %w", i, err)
			}
			var keys []json.RawMessage
			if err := json.Unmarshal(e[1], &keys); err != nil || keys == nil {
				return nil, fmt.Errorf("transaction JSON: access_list[%d]: storage keys must be a list", i)
			}
			t := types.AccessTuple{Address: a, StorageKeys: []types.Bytes{}}
			for j, k := range keys {
				b, err := jsonHex(k)
				if err != nil {
					return nil, fmt.Errorf("transaction JSON: access_list[%d] key %d: %w", i, j, err)
				}
				t.StorageKeys = append(t.StorageKeys, b)
			}
			d.AccessList = append(d.AccessList, t)
		}
	}
	if raw, ok := obj["signature"]; ok && !isNull(raw) {
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil || len(parts) != 3 {
			return nil, fmt.Errorf("transaction JSON: field signature: want null or [y_parity, \"0x…r\", \"0x…s\"]")
		}
		y, err := jsonUint(parts[0])
		if err != nil || y > 1 {
			return nil, fmt.Errorf("transaction JSON: signature y_parity must be 0 or 1")
		}
		r, err := jsonHex(parts[1])
		if err != nil || len(r) != 32 {
			return nil, fmt.Errorf("transaction JSON: signature r must be 32 bytes of 0x-hex")
		}
		s, err := jsonHex(parts[2])
		if err != nil || len(s) != 32 {
			return nil, fmt.Errorf("transaction JSON: signature s must be 32 bytes of 0x-hex")
		}
		d.Signature = &types.Signature{YParity: uint8(y)}
		copy(d.Signature.R[:], r)
		copy(d.Signature.S[:], s)
	}
	return types.NewTx(d)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func jsonUint(raw json.RawMessage) (uint64, error) {
	s, err := jsonIntText(raw)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an unsigned 64-bit integer", s)
	}
	return v, nil
}

func jsonBig(raw json.RawMessage) (*big.Int, error) {
	s, err := jsonIntText(raw)
	if err != nil {
		return nil, err
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 {
		return nil, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return v, nil
}

func jsonIntText(raw json.RawMessage) (string, error) {
	t := strings.TrimSpace(string(raw))
	if strings.HasPrefix(t, "\"") {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	if t == "" || strings.ContainsAny(t, ".eE") {
		return "", fmt.Errorf("%s is not an integer", t)
	}
	return t, nil
}

func jsonHex(raw json.RawMessage) (types.Bytes, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("want a 0x-hex string")
	}
	var b types.HexBytes
	if err := b.UnmarshalText([]byte(s)); err != nil {
		return nil, err
	}
	return types.Bytes(b), nil
}
