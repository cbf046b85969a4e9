package api

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func txJSON(tx *types.Tx) apitypes.Tx {
	from, _ := tx.Sender()
	d := tx.Data()
	return apitypes.Tx{
		Hash: tx.Hash(), From: from, ChainID: d.ChainID, Nonce: d.Nonce, To: d.To, Value: d.Value.String(),
		CyclesLimit: d.CyclesLimit, CellsLimit: d.CellsLimit,
		MaxFeePerCycle: d.MaxFeePerCycle, MaxFeePerCell: d.MaxFeePerCell,
		TipPerCycle: d.TipPerCycle, TipPerCell: d.TipPerCell,
		AccessList: d.AccessList, Payload: d.Payload, Raw: tx.Encode(),
	}
}

func receiptJSON(r *types.Receipt, height uint64, txIndex uint32) apitypes.Receipt {
	status := "success"
	if r.Status != types.ReceiptSuccess {
		status = "failed"
	}
	out := apitypes.Receipt{
		TxHash: r.TxHash, Status: status, CyclesUsed: r.CyclesUsed, CellsUsed: r.CellsUsed,
		FeePaid: r.FeePaid.String(), Burned: r.Burned.String(), Tip: r.Tip.String(),
		Error: r.Error, Code: r.Code, Created: r.Created, Return: r.Return, Decoded: cborJSON(r.Return), Events: []apitypes.Event{},
		Messages: r.Messages, FailedMessage: r.FailedMessage,
	}
	if out.Messages == nil {
		out.Messages = []types.MessageRecord{}
	}
	if r.Code != 0 {
		out.CodeName = system.Code(r.Code).String()
	}
	h := r.TxHash
	for i, ev := range r.Events {
		out.Events = append(out.Events, eventJSON(ev, height, &h, txIndex, uint32(i)))
	}
	return out
}

func eventJSON(ev types.Event, height uint64, txHash *types.Hash, txIndex, index uint32) apitypes.Event {
	return apitypes.Event{
		Emitter: ev.Emitter, Topic: ev.Topic, Data: ev.Data, Decoded: cborJSON(ev.Data),
		Height: height, TxHash: txHash, TxIndex: txIndex, Index: index,
	}
}

// cborJSON renders canonical CBOR as JSON for people: maps with string keys
// become objects, byte strings 0x-hex, big integers decimal strings. Data
// that does not convert gives null (the raw bytes are always alongside).
func cborJSON(data []byte) json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	var v any
	if err := codec.Unmarshal(data, &v); err != nil {
		return nil
	}
	conv, err := toJSONValue(v)
	if err != nil {
		return nil
	}
	b, err := json.Marshal(conv)
	if err != nil {
		return nil
	}
	return b
}

func toJSONValue(v any) (any, error) {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			ks, ok := k.(string)
			if !ok {
				ks = fmt.Sprint(k)
			}
			c, err := toJSONValue(val)
			if err != nil {
				return nil, err
			}
			m[ks] = c
		}
		return m, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := toJSONValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case []byte:
		return "0x" + hex.EncodeToString(x), nil
	case big.Int:
		return x.String(), nil
	case *big.Int:
		return x.String(), nil
	case uint64:
		if x > 1<<53 {
			return fmt.Sprint(x), nil
		}
		return x, nil
	case int64:
		if x > 1<<53 || x < -(1<<53) {
			return fmt.Sprint(x), nil
		}
		return x, nil
	}
	return v, nil
}
