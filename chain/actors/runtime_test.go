package actors

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// memReader is an empty state.
type memReader struct{}

func (memReader) Get([]byte) ([]byte, bool, error)           { return nil, false, nil }
func (memReader) Scan([]byte, func(k, v []byte) error) error { return nil }

func TestRegisterRoutesHostCalls(t *testing.T) {
	rt := NewRuntime(nil, Limits{}, 7, 1000)
	if rt.Limits().FanoutPerTx != 1024 || rt.Limits().QueryCycles != 10_000_000 {
		t.Fatalf("defaults not filled: %+v", rt.Limits())
	}
	var got types.Address
	op := func(h *Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
		got = h.Actor()
		return &pvm.HostResponse{Value: []byte(req.Op), Cycles: 3}, nil
	}
	if err := rt.Register("ping", op); err != nil {
		t.Fatal(err)
	}
	if err := rt.Register("ping", op); err == nil {
		t.Fatal("a second registration of the same op was accepted")
	}
	x := rt.NewExec(context.Background(), state.NewOverlay(memReader{}), system.Env{Height: 1}, nil, types.Address{}, &Meter{}, NewBlockMeters())
	h := &Host{x: x, actor: types.Address{9}}
	resp, err := h.HostCall(&pvm.HostRequest{Op: "ping"})
	if err != nil || string(resp.Value.([]byte)) != "ping" || got != (types.Address{9}) {
		t.Fatalf("ping: %v %v %v", resp, err, got)
	}
	if _, err := h.HostCall(&pvm.HostRequest{Op: "pong"}); err == nil {
		t.Fatal("an unregistered op was served")
	}
}

func TestMarkRollback(t *testing.T) {
	rt := NewRuntime(nil, Limits{}, 7, 1000)
	o := state.NewOverlay(memReader{})
	x := rt.NewExec(context.Background(), o, system.Env{Height: 1}, nil, types.Address{}, &Meter{}, nil)
	m := x.Mark()
	o.Set([]byte("k"), []byte("v"))
	x.AppendEvent(types.Event{Topic: "t"})
	x.Rollback(m)
	if _, ok, _ := o.Get([]byte("k")); ok || len(x.Meter().Events) != 0 {
		t.Fatal("rollback left state or events behind")
	}
	if err := x.MoveValue(types.Address{1}, types.Address{2}, big.NewInt(1)); !IsFailure(err) || errors.Is(err, ErrInfra) {
		t.Fatalf("an overdraft is not a deterministic failure: %v", err)
	}
}
