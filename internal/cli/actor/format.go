package actor

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// apitypesEvent is the event type the actor commands print.
type apitypesEvent = apitypes.Event

func cborText(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var v any
	if err := codec.Unmarshal(b, &v); err != nil {
		return "0x" + hex.EncodeToString(b)
	}
	js, err := json.Marshal(jsonable(v))
	if err != nil {
		return "0x" + hex.EncodeToString(b)
	}
	return string(js)
}

// jsonable turns decoded CBOR into JSON-encodable values.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case big.Int:
		return x.String()
	}
	return v
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func statusText(s uint8) string {
	if s == types.ReceiptSuccess {
		return "success"
	}
	return "failed"
}
