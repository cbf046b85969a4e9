package sdk_test

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

func setup(t *testing.T) (*nodetest.Devnet, *sdk.Client) {
	d := nodetest.New(t)
	srv := d.Serve(t, 20*time.Millisecond)
	return d, sdk.New(srv.URL)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestTransferAndProof(t *testing.T) {
	d, c := setup(t)
	key, _ := crypto.GenerateKey()
	addr := types.PubkeyToAddress(key.PublicKey)
	h, err := c.Chain().Faucet(ctx(t), addr, sdk.MustCBY("10"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chain().WaitForReceipt(ctx(t), h); err != nil {
		t.Fatal(err)
	}
	other := types.Address{0x42}
	tx, err := c.Account(key).Transfer(ctx(t), other, big.NewInt(12345), sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Chain().WaitForReceipt(ctx(t), tx.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if r.Receipt.Status != "success" || len(r.Receipt.Events) != 1 || r.Receipt.Events[0].Topic != "transfer" {
		t.Fatalf("receipt %+v", r.Receipt)
	}
	bal, err := c.Chain().Balance(ctx(t), other)
	if err != nil || bal.Int64() != 12345 {
		t.Fatalf("balance %v %v", bal, err)
	}

	// Proofs verify against a state root taken from a block header alone.
	height := *r.BlockHeight
	blk, err := c.Chain().Block(ctx(t), "latest", false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Chain().Proof(ctx(t), state.AccountKey(other), &blk.Header.Height)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := sdk.VerifyAccount(blk.Header.StateRoot, other, p)
	if err != nil || acc.Balance.Int64() != 12345 {
		t.Fatalf("verify account: %v %v", acc, err)
	}
	// A forged value fails.
	forged := *p
	fv := append(types.Bytes{}, *p.Value...)
	fv[len(fv)-1] ^= 1
	forged.Value = &fv
	if _, err := sdk.VerifyAccount(blk.Header.StateRoot, other, &forged); err == nil {
		t.Fatal("forged proof verified")
	}
	// Absence: the account did not exist before the transfer's block.
	before := height - 1
	p0, err := c.Chain().Proof(ctx(t), state.AccountKey(other), &before)
	if err != nil {
		t.Fatal(err)
	}
	b0, err := c.Chain().Block(ctx(t), "0", false)
	_ = b0
	hb, err := c.Chain().Block(ctx(t), itoa(before), false)
	if err != nil {
		t.Fatal(err)
	}
	if p0.Value != nil {
		t.Fatal("expected absence")
	}
	if acc0, err := sdk.VerifyAccount(hb.Header.StateRoot, other, p0); err != nil || acc0.Balance.Sign() != 0 {
		t.Fatalf("absence proof: %v", err)
	}
	// An absence proof does not verify against the later root.
	if _, err := sdk.VerifyAccount(blk.Header.StateRoot, other, p0); err == nil {
		t.Fatal("stale absence proof verified against a later root")
	}
	_ = d
}

func itoa(n uint64) string { return big.NewInt(int64(n)).String() }

func TestAPIErrors(t *testing.T) {
	_, c := setup(t)
	_, err := c.Chain().SubmitRaw(ctx(t), []byte{0x8d, 0x01})
	var ae *sdk.APIError
	if !errors.As(err, &ae) || ae.Code != types.ErrMalformedTx.Code || ae.Status != http.StatusBadRequest {
		t.Fatalf("malformed: %v", err)
	}
	_, err = c.Chain().Tx(ctx(t), types.Hash{1})
	if !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("unknown tx: %v", err)
	}
	_, err = c.Chain().Block(ctx(t), "99999", false)
	if !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("unknown block: %v", err)
	}
	_, err = c.Chain().Block(ctx(t), "nope", false)
	if !errors.As(err, &ae) || ae.Code != "bad_block_id" {
		t.Fatalf("bad id: %v", err)
	}
	_, err = c.Chain().Faucet(ctx(t), types.Address{1}, sdk.MustCBY("100000000"))
	if !errors.As(err, &ae) || ae.Code != "faucet_limit" {
		t.Fatalf("faucet limit: %v", err)
	}
	_, err = c.Chain().Events(ctx(t), sdk.EventQuery{Cursor: "zz"})
	if !errors.As(err, &ae) || ae.Code != apitypes.CodeBadCursor {
		t.Fatalf("bad cursor: %v", err)
	}
	resp, err := http.Post(c.URL()+"/v1/txs", "application/json", strings.NewReader("{nope"))
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("bad json: %v", err)
	}
	resp.Body.Close()
	resp, err = http.Get(c.URL() + "/v2/whatever")
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("unknown route: %v %d", err, resp.StatusCode)
	}
	resp.Body.Close()
	big := strings.Repeat("a", 2*types.MaxTxSize+8192)
	resp, err = http.Post(c.URL()+"/v1/txs", "application/json", strings.NewReader(`{"tx":"`+big+`"}`))
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %v %d", err, resp.StatusCode)
	}
	resp.Body.Close()
	// The node still serves.
	if _, err := c.Chain().Status(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestSubscribeResumes(t *testing.T) {
	d := nodetest.New(t)
	srv := d.Serve(t, 10*time.Millisecond)
	c := sdk.New(srv.URL)
	var got []uint64
	c1, cancel := context.WithCancel(ctx(t))
	err := c.Chain().Subscribe(c1, 1, func(b apitypes.Block) error {
		got = append(got, b.Header.Height)
		if len(got) == 5 {
			// Drop every connection mid-stream: Subscribe must reconnect and resume.
			srv.CloseClientConnections()
		}
		if len(got) == 15 {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range got {
		if h != uint64(i+1) {
			t.Fatalf("heights %v: gap or repeat at %d", got, i)
		}
	}
	// Resume from where we stopped, as a client would after a restart.
	stop := errors.New("stop")
	next := got[len(got)-1] + 1
	err = c.Chain().Subscribe(ctx(t), next, func(b apitypes.Block) error {
		if b.Header.Height != next {
			t.Fatalf("resumed at %d, want %d", b.Header.Height, next)
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("subscribe returned %v", err)
	}
}

func TestEventsPaging(t *testing.T) {
	d, c := setup(t)
	faucet := types.PubkeyToAddress(d.Faucet.PublicKey)
	var last types.Hash
	for i := 0; i < 7; i++ {
		h, err := c.Chain().Faucet(ctx(t), types.Address{byte(i + 1)}, big.NewInt(int64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		last = h
	}
	if _, err := c.Chain().WaitForReceipt(ctx(t), last); err != nil {
		t.Fatal(err)
	}
	for _, q := range []sdk.EventQuery{{Emitter: &faucet}, {Topic: "transfer"}, {}} {
		var all []apitypes.Event
		q.Limit = 3
		for {
			page, err := c.Chain().Events(ctx(t), q)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, page.Events...)
			if page.NextCursor == "" {
				break
			}
			q.Cursor = page.NextCursor
		}
		if len(all) != 7 {
			t.Fatalf("query %+v: %d events, want 7", q, len(all))
		}
	}
}

func TestAmounts(t *testing.T) {
	for in, want := range map[string]string{"1": "1 CBY", "1.5": "1.5 CBY", "0.000000000000000001": "0.000000000000000001 CBY", "12wei": "0.000000000000000012 CBY"} {
		v, err := sdk.ParseCBY(in)
		if err != nil || sdk.FormatCBY(v) != want {
			t.Errorf("%s: %v %v", in, sdk.FormatCBY(v), err)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1.0000000000000000001", "1.", "+1"} {
		if _, err := sdk.ParseCBY(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
