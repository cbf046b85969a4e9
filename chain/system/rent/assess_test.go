package rent

import (
	"math/big"
	"testing"
)

func TestAssess(t *testing.T) {
	p := Params{GraceEpochs: 7, WarningEpochs: 3, CatchUpBps: 1000}
	n := func(v int64) *big.Int { return big.NewInt(v) }
	type acct struct {
		charged, since uint64
		prepaid, debt  int64
		status         Status
	}
	for _, c := range []struct {
		name     string
		in       acct
		now      uint64
		per, bal int64
		want     acct
		prepaid  int64 // taken from prepaid
		balance  int64 // taken from balance
		evict    bool
	}{
		{"paid from prepaid", acct{charged: 4, prepaid: 250}, 5, 100, 0, acct{charged: 5, prepaid: 150}, 100, 0, false},
		{"prepaid then balance", acct{charged: 4, prepaid: 30}, 6, 100, 1000, acct{charged: 6}, 30, 170, false},
		{"same epoch charges nothing", acct{charged: 6}, 6, 100, 0, acct{charged: 6}, 0, 0, false},
		{"short: debt with 10% fee, overdue", acct{charged: 4}, 5, 100, 40, acct{charged: 5, since: 5, debt: 66, status: StatusOverdue}, 0, 40, false},
		{"old debt paid first, 66 of the new rent missed (+6 fee)", acct{charged: 5, since: 5, debt: 66, status: StatusOverdue}, 6, 100, 100, acct{charged: 6, since: 5, debt: 66 + 6, status: StatusOverdue}, 0, 100, false},
		{"debt cleared: active again", acct{charged: 6, since: 5, debt: 500, status: StatusOverdue}, 6, 100, 10_000, acct{charged: 6}, 0, 500, false},
		{"grace ends: warning at N+8", acct{charged: 11, since: 5, debt: 700, status: StatusOverdue}, 12, 100, 0, acct{charged: 12, since: 5, debt: 810, status: StatusWarning}, 0, 0, false},
		{"still warning at N+10", acct{charged: 13, since: 5, debt: 900, status: StatusWarning}, 14, 100, 0, acct{charged: 14, since: 5, debt: 1010, status: StatusWarning}, 0, 0, false},
		{"evict at N+11", acct{charged: 14, since: 5, debt: 1010, status: StatusWarning}, 15, 100, 0, acct{charged: 15, since: 5, debt: 1120, status: StatusWarning}, 0, 0, true},
		{"a late sweep evicts too", acct{charged: 6, since: 5, debt: 10, status: StatusOverdue}, 30, 1, 0, acct{charged: 30, since: 5, debt: 10 + 24 + 2, status: StatusWarning}, 0, 0, true},
		{"paying in warning saves it", acct{charged: 13, since: 5, debt: 900, status: StatusWarning}, 14, 100, 1000, acct{charged: 14}, 0, 1000, false},
		{"evicted is left alone", acct{charged: 3, since: 1, debt: 5, status: StatusEvicted}, 40, 100, 1000, acct{charged: 3, since: 1, debt: 5, status: StatusEvicted}, 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &Account{Charged: c.in.charged, OverdueSince: c.in.since, Prepaid: n(c.in.prepaid), Debt: n(c.in.debt), Status: c.in.status}
			s := Assess(a, c.now, n(c.per), n(c.bal), p)
			got := acct{a.Charged, a.OverdueSince, a.Prepaid.Int64(), a.Debt.Int64(), a.Status}
			if got != c.want {
				t.Errorf("account %+v, want %+v", got, c.want)
			}
			if s.FromPrepaid.Int64() != c.prepaid || s.FromBalance.Int64() != c.balance || s.Evict != c.evict {
				t.Errorf("settlement prepaid %s balance %s evict %v, want %d %d %v", s.FromPrepaid, s.FromBalance, s.Evict, c.prepaid, c.balance, c.evict)
			}
		})
	}
}

func TestEvictEpochIsN11(t *testing.T) {
	// N = 4 is the last paid epoch: debt appears in epoch 5 = N+1.
	if got := EvictEpoch(5, Params{}); got != 15 {
		t.Fatalf("EvictEpoch(N+1=5) = %d, want N+11 = 15", got)
	}
}
