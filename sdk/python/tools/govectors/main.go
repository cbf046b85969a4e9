// Command govectors is the Go side of the cowboy-py interop tests: it emits
// transactions, signatures, instruction payloads, job specs, manifests and
// handler arguments encoded by the node's own packages from a seeded random
// generator (mode "vectors"), and decodes transactions the Python SDK built
// (mode "decode": one hex transaction per stdin line). sdk/python/tests run
// it; it is not part of any product.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

func main() {
	mode := flag.String("mode", "vectors", "vectors | decode")
	seed := flag.Int64("seed", 1, "random seed")
	n := flag.Int("n", 50, "vectors per kind")
	flag.Parse()
	var err error
	switch *mode {
	case "vectors":
		err = json.NewEncoder(os.Stdout).Encode(vectors(rand.New(rand.NewSource(*seed)), *n))
	case "decode":
		err = decode()
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "govectors:", err)
		os.Exit(1)
	}
}

type txVec struct {
	Fields      map[string]any `json:"fields"`
	Unsigned    string         `json:"unsigned"`
	SigningHash string         `json:"signing_hash"`
	Key         string         `json:"key"`
	Signed      string         `json:"signed"`
	Hash        string         `json:"hash"`
	Sender      string         `json:"sender"`
}

type kv struct {
	In  any    `json:"in"`
	Hex string `json:"hex"`
}

var edgeU64 = []uint64{0, 1, 23, 24, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1<<64 - 1}

func u64(r *rand.Rand) uint64 {
	if r.Intn(2) == 0 {
		return edgeU64[r.Intn(len(edgeU64))]
	}
	return r.Uint64() >> uint(r.Intn(64))
}

func bytesN(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

func randLen(r *rand.Rand) int {
	return []int{0, 1, 23, 24, 255, 256, 1000, 70000}[r.Intn(8)]
}

func h(b []byte) string { return hex.EncodeToString(b) }

func vectors(r *rand.Rand, n int) map[string]any {
	out := map[string]any{}
	var txs []txVec
	for i := 0; i < n; i++ {
		d := types.TxData{ChainID: u64(r), Nonce: u64(r), CyclesLimit: u64(r), CellsLimit: u64(r),
			MaxFeePerCycle: u64(r), MaxFeePerCell: u64(r), TipPerCycle: u64(r), TipPerCell: u64(r)}
		f := map[string]any{}
		if r.Intn(3) > 0 {
			a := types.Address(bytesN(r, 20))
			d.To = &a
			f["to"] = a.String()
		}
		switch r.Intn(3) {
		case 0:
			d.Value = new(big.Int).SetUint64(u64(r))
		case 1:
			d.Value = new(big.Int).SetBytes(bytesN(r, 1+r.Intn(40)))
		default:
			d.Value = new(big.Int)
		}
		f["value"] = d.Value.String()
		switch r.Intn(3) {
		case 1:
			d.AccessList = []types.AccessTuple{}
			f["access_list"] = []any{}
		case 2:
			var al []any
			for j := 0; j < 1+r.Intn(3); j++ {
				t := types.AccessTuple{Address: types.Address(bytesN(r, 20))}
				var keys any
				switch r.Intn(3) {
				case 1:
					t.StorageKeys = []types.Bytes{}
					keys = []string{}
				case 2:
					ks := []string{}
					for k := 0; k < 1+r.Intn(3); k++ {
						kb := bytesN(r, r.Intn(40))
						t.StorageKeys = append(t.StorageKeys, kb)
						ks = append(ks, h(kb))
					}
					keys = ks
				}
				d.AccessList = append(d.AccessList, t)
				al = append(al, []any{t.Address.String(), keys})
			}
			f["access_list"] = al
		}
		d.Payload = bytesN(r, randLen(r))
		f["payload"] = h(d.Payload)
		for _, k := range []string{"chain_id", "nonce", "cycles_limit", "cells_limit", "max_fee_per_cycle", "max_fee_per_cell", "tip_per_cycle", "tip_per_cell"} {
			f[k] = map[string]uint64{"chain_id": d.ChainID, "nonce": d.Nonce, "cycles_limit": d.CyclesLimit, "cells_limit": d.CellsLimit,
				"max_fee_per_cycle": d.MaxFeePerCycle, "max_fee_per_cell": d.MaxFeePerCell, "tip_per_cycle": d.TipPerCycle, "tip_per_cell": d.TipPerCell}[k]
		}
		tx, err := types.NewTx(d)
		if err != nil {
			panic(err)
		}
		key, _ := crypto.ToECDSA(crypto.Keccak256(bytesN(r, 32)))
		signed, err := types.SignTx(tx, key)
		if err != nil {
			panic(err)
		}
		sh := tx.SigningHash()
		hh := signed.Hash()
		from, _ := signed.Sender()
		txs = append(txs, txVec{Fields: f, Unsigned: h(tx.Encode()), SigningHash: h(sh[:]), Key: h(crypto.FromECDSA(key)),
			Signed: h(signed.Encode()), Hash: h(hh[:]), Sender: from.String()})
	}
	out["txs"] = txs

	var kec []kv
	for i := 0; i < n; i++ {
		b := bytesN(r, []int{0, 1, 135, 136, 137, 271, 272, 1000}[r.Intn(8)])
		kec = append(kec, kv{In: h(b), Hex: h(crypto.Keccak256(b))})
	}
	out["keccak"] = kec

	var ins []kv
	for i := 0; i < n; i++ {
		var in types.Instruction
		var desc map[string]any
		switch i % 12 {
		case 0:
			c := &types.Call{Handler: randName(r), Args: bytesN(r, randLen(r)%300)}
			in, desc = c, map[string]any{"type": "call", "handler": c.Handler, "args": h(c.Args)}
		case 1:
			d := &types.Deploy{Code: bytesN(r, randLen(r)), Salt: bytesN(r, r.Intn(33)), InitHandler: randName(r), InitArgs: bytesN(r, r.Intn(50))}
			if r.Intn(2) == 0 {
				d.Requires = bytesN(r, 1+r.Intn(40))
			}
			in, desc = d, map[string]any{"type": "deploy", "code": h(d.Code), "salt": h(d.Salt), "init_handler": d.InitHandler, "init_args": h(d.InitArgs), "requires": h(d.Requires)}
		case 2:
			p := &types.PublishLibrary{Name: randName(r), Code: bytesN(r, randLen(r))}
			in, desc = p, map[string]any{"type": "publish_library", "name": p.Name, "code": h(p.Code)}
		case 3:
			p := &types.RemoveLibrary{Name: randName(r)}
			in, desc = p, map[string]any{"type": "remove_library", "name": p.Name}
		case 4:
			p := &types.SubmitJob{Spec: bytesN(r, randLen(r)%2000)}
			in, desc = p, map[string]any{"type": "submit_job", "spec": h(p.Spec)}
		case 5:
			v := types.Hash(bytesN(r, 32))
			in, desc = &types.VolumeFund{Volume: v}, map[string]any{"type": "volume_fund", "volume": v.String()}
		case 6:
			c := &types.TokenCreate{Name: randName(r), Symbol: randName(r), Decimals: uint8(r.Intn(256))}
			if r.Intn(2) == 0 {
				c.Cap = randAmount(r)
			}
			if r.Intn(2) == 0 {
				c.Initial = randAmount(r)
			}
			in, desc = c, map[string]any{"type": "token_create", "name": c.Name, "symbol": c.Symbol, "decimals": c.Decimals, "cap": amountStr(c.Cap), "initial": amountStr(c.Initial)}
		case 7:
			t := &types.TokenTransfer{ID: types.Hash(bytesN(r, 32)), To: types.Address(bytesN(r, 20)), Amount: randAmount(r)}
			in, desc = t, map[string]any{"type": "token_transfer", "token": h(t.ID[:]), "to": h(t.To[:]), "amount": t.Amount.String()}
		case 8:
			t := &types.TokenTransferFrom{ID: types.Hash(bytesN(r, 32)), From: types.Address(bytesN(r, 20)), To: types.Address(bytesN(r, 20)), Amount: randAmount(r)}
			in, desc = t, map[string]any{"type": "token_transfer_from", "token": h(t.ID[:]), "owner": h(t.From[:]), "to": h(t.To[:]), "amount": t.Amount.String()}
		case 9:
			t := &types.TokenApprove{ID: types.Hash(bytesN(r, 32)), Spender: types.Address(bytesN(r, 20)), Amount: randAmount(r)}
			in, desc = t, map[string]any{"type": "token_approve", "token": h(t.ID[:]), "spender": h(t.Spender[:]), "amount": t.Amount.String()}
		case 10:
			t := &types.TokenMint{ID: types.Hash(bytesN(r, 32)), To: types.Address(bytesN(r, 20)), Amount: randAmount(r)}
			in, desc = t, map[string]any{"type": "token_mint", "token": h(t.ID[:]), "to": h(t.To[:]), "amount": t.Amount.String()}
		case 11:
			t := &types.TokenBurn{ID: types.Hash(bytesN(r, 32)), Amount: randAmount(r)}
			in, desc = t, map[string]any{"type": "token_burn", "token": h(t.ID[:]), "amount": t.Amount.String()}
		}
		b, err := types.EncodeInstruction(in)
		if err != nil {
			panic(err)
		}
		ins = append(ins, kv{In: desc, Hex: h(b)})
	}
	out["instructions"] = ins

	var specs []kv
	for i := 0; i < n; i++ {
		s, desc := randSpec(r)
		b, err := s.Encode()
		if err != nil {
			panic(err)
		}
		specs = append(specs, kv{In: desc, Hex: h(b)})
	}
	out["jobspecs"] = specs

	var mans []kv
	for _, m := range []string{
		`{"requires":[{"entitlement":"timers"}]}`,
		`{"requires":[{"entitlement":"jobs","params":["mcp","llm","http"]},{"entitlement":"http","params":["api.example.com","127.0.0.1"]}]}`,
		`{"requires":[{"entitlement":"http","params":["*.example.com","set:price_feeds"],"inheritable":true},{"entitlement":"timers"},{"entitlement":"jobs","params":["llm"]}]}`,
	} {
		mf, err := entitlement.ParseManifestJSON([]byte(m))
		if err != nil {
			panic(err)
		}
		b, err := mf.Encode()
		if err != nil {
			panic(err)
		}
		var v any
		json.Unmarshal([]byte(m), &v)
		mans = append(mans, kv{In: v, Hex: h(b)})
	}
	out["manifests"] = mans

	var args []kv
	for _, js := range []string{`[]`, `{}`, `[5]`, `[-1, 0, 23, 24, -24, -25, 255, 256, 65536, 4294967296, 18446744073709551615, 18446744073709551616, -18446744073709551616, -18446744073709551617, 340282366920938463463374607431768211456]`,
		`["a", "ü€𝄞", "", true, false, null]`, `[1.0, 1.5, -0.0, 0.1, 65504.0, 65505.0, 1e300, 3.4028234663852886e38, 5.960464477539063e-8, 1e-320]`,
		`{"b": 1, "a": [1, {"z": 2, "aa": 3}], "": null, "é": "x", "bb": {}}`, `[[[[]]]]`, `{"by": 5}`} {
		b, err := sdk.JSONArgs(js)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", js, err))
		}
		args = append(args, kv{In: js, Hex: h(b)})
	}
	out["args"] = args

	// Fee suggestions (sdk.Client.EstimateFees without the node): intrinsic
	// cost of each instruction plus an expected use, fees.Schedule.Suggest.
	var fv []map[string]any
	for i, in := range ins {
		payload, _ := hex.DecodeString(in.Hex)
		decoded, err := types.DecodeInstruction(payload)
		if err != nil {
			panic(err)
		}
		probe, err := types.NewTx(types.TxData{Payload: payload})
		if err != nil {
			panic(err)
		}
		ic, ib := fees.Intrinsic(probe, decoded)
		s := fees.Default()
		s.MaxTxCycles, s.MaxTxCells = []uint64{20_000_000, 100_000}[i%2], []uint64{1_000_000, 1_000}[i%2]
		bc, bb := u64(r)>>2, u64(r)>>2
		ec, eb := r.Uint64()>>uint(40+r.Intn(24)), r.Uint64()>>uint(40+r.Intn(24))
		tc, tb := r.Uint64()>>uint(50+r.Intn(14)), r.Uint64()>>uint(50+r.Intn(14))
		e := s.Suggest(fees.Basefees{Cycle: bc, Cell: bb}, ic+ec, ib+eb, tc, tb)
		fv = append(fv, map[string]any{"payload": in.Hex, "intrinsic": []uint64{ic, ib}, "basefees": []uint64{bc, bb},
			"max_tx": []uint64{s.MaxTxCycles, s.MaxTxCells}, "expect": []uint64{ec, eb}, "tips": []uint64{tc, tb}, "estimate": e})
	}
	out["fees"] = fv
	return out
}

func randName(r *rand.Rand) string {
	const alpha = "abcdefghijklmnopqrstuvwxyz_"
	n := r.Intn(30)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteByte(alpha[r.Intn(len(alpha))])
	}
	if r.Intn(4) == 0 {
		sb.WriteString("ü")
	}
	return sb.String()
}

func randSpec(r *rand.Rand) (*job.JobSpec, map[string]any) {
	s := &job.JobSpec{
		JobID:   types.Hash(bytesN(r, 32)),
		JobType: job.JobType(1 + r.Intn(4)),
		Bounds:  job.ResourceBounds{MaxTokens: u64(r), MaxWallTimeMs: u64(r), MaxMemoryBytes: u64(r)},
		Verification: job.VerificationConfig{Mode: job.VerificationMode(1 + r.Intn(6)), Runners: uint8(r.Intn(256)), QuorumBps: uint16(r.Intn(65536)),
			VoteField: randName(r), SimilarityPpm: r.Uint32(), EmbeddingDim: uint16(r.Intn(65536))},
		MaxPrice:        new(big.Int).SetBytes(bytesN(r, r.Intn(33))),
		Tip:             new(big.Int).SetBytes(bytesN(r, r.Intn(10))),
		TimeoutBlocks:   u64(r),
		Callback:        job.CallbackInfo{Actor: types.Address(bytesN(r, 20)), Handler: randName(r)},
		Submitter:       types.Address(bytesN(r, 20)),
		SubmittedAt:     u64(r),
		ResultSchema:    job.ResultSchema{MaxReturnBytes: r.Uint32(), ExpectedExecutionMs: u64(r), DataFormat: job.DataFormatKind(1 + r.Intn(3))},
		TEERequired:     r.Intn(2) == 0,
		ToolchainDigest: types.Hash(bytesN(r, 32)),
	}
	d := map[string]any{
		"job_id": s.JobID.String(), "job_type": s.JobType, "max_tokens": s.Bounds.MaxTokens, "max_wall_time_ms": s.Bounds.MaxWallTimeMs,
		"max_memory_bytes": s.Bounds.MaxMemoryBytes, "verification_mode": s.Verification.Mode, "runners": s.Verification.Runners,
		"quorum_bps": s.Verification.QuorumBps, "vote_field": s.Verification.VoteField, "similarity_ppm": s.Verification.SimilarityPpm,
		"embedding_dim": s.Verification.EmbeddingDim, "max_price": s.MaxPrice.String(), "tip": s.Tip.String(), "timeout_blocks": s.TimeoutBlocks,
		"callback_actor": s.Callback.Actor.String(), "callback_handler": s.Callback.Handler, "submitter": s.Submitter.String(),
		"submitted_at": s.SubmittedAt, "max_return_bytes": s.ResultSchema.MaxReturnBytes, "expected_execution_ms": s.ResultSchema.ExpectedExecutionMs,
		"data_format": s.ResultSchema.DataFormat, "tee_required": s.TEERequired, "toolchain_digest": s.ToolchainDigest.String(),
	}
	if r.Intn(2) == 0 {
		s.Verification.Checks = []job.Check{}
		var cs []any
		for i := 0; i < r.Intn(3); i++ {
			c := job.Check{Kind: job.CheckKind(1 + r.Intn(5)), Field: randName(r), Tolerance: "0.5", Min: "-1", Max: randName(r)}
			if r.Intn(2) == 0 {
				c.Schema = bytesN(r, r.Intn(20))
			}
			s.Verification.Checks = append(s.Verification.Checks, c)
			var schema any
			if c.Schema != nil {
				schema = h(c.Schema)
			}
			cs = append(cs, map[string]any{"kind": c.Kind, "field": c.Field, "schema": schema, "tolerance": c.Tolerance, "min": c.Min, "max": c.Max})
		}
		if cs == nil {
			cs = []any{}
		}
		d["checks"] = cs
	}
	if r.Intn(2) == 0 {
		s.RequiredRunnerPool = bytesN(r, r.Intn(20))
		d["required_runner_pool"] = h(s.RequiredRunnerPool)
	}
	if r.Intn(2) == 0 {
		s.ResultSchema.JSONSchema = bytesN(r, r.Intn(50))
		d["json_schema"] = h(s.ResultSchema.JSONSchema)
	}
	if r.Intn(2) == 0 {
		s.RequiredDomains = []string{}
		for i := 0; i < r.Intn(4); i++ {
			s.RequiredDomains = append(s.RequiredDomains, fmt.Sprintf("d%02d.example.com", i))
		}
		d["required_domains"] = s.RequiredDomains
	}
	if r.Intn(2) == 0 {
		s.Input = bytesN(r, r.Intn(100))
		d["input"] = h(s.Input)
	}
	return s, d
}

// decode reads hex transactions, one per line, and reports what the node's
// decoder makes of each: its hash, signing hash, sender and payload kind.
func decode() error {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<22)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		res := map[string]any{}
		raw, err := hex.DecodeString(line)
		if err != nil {
			return err
		}
		tx, err := types.DecodeTx(raw)
		if err != nil {
			res["error"] = err.Error()
		} else {
			hh, sh := tx.Hash(), tx.SigningHash()
			res["hash"], res["signing_hash"] = h(hh[:]), h(sh[:])
			if from, err := tx.Sender(); err != nil {
				res["sender_error"] = err.Error()
			} else {
				res["sender"] = from.String()
			}
			in, err := types.DecodeInstruction(tx.Payload())
			switch {
			case err != nil:
				res["payload_error"] = err.Error()
			case in == nil:
				res["kind"] = "transfer"
			default:
				res["kind"] = in.InstructionKind().String()
				again, err := types.EncodeInstruction(in)
				res["payload_roundtrip"] = err == nil && h(again) == h(tx.Payload())
			}
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return sc.Err()
}

// randAmount is a token amount: small, 64-bit or 256-bit.
func randAmount(r *rand.Rand) *big.Int {
	switch r.Intn(3) {
	case 0:
		return big.NewInt(int64(r.Intn(1000)))
	case 1:
		return new(big.Int).SetUint64(r.Uint64())
	}
	return new(big.Int).SetBytes(bytesN(r, 32))
}

// amountStr is an optional amount as a decimal string ("" for nil).
func amountStr(v *big.Int) string {
	if v == nil {
		return ""
	}
	return v.String()
}
