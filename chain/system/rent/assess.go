package rent

import "math/big"

// Settlement is what one assessment of an account decided; the module
// moves the value and emits the events.
type Settlement struct {
	Epochs      uint64   // epochs charged
	Due         *big.Int // rent of those epochs
	FromPrepaid *big.Int // taken from the prepaid rent
	FromBalance *big.Int // taken from the actor's balance
	Fee         *big.Int // catch-up fee added to the debt
	From, To    Status   // standing before and after
	Evict       bool     // the actor is due for eviction
}

// Assess is the rent state machine (pure): it charges acc's epochs after
// acc.Charged up to now at perEpoch each, pays the debt and then the new
// rent from the prepaid rent and then from balance, adds what is missed to
// the debt with the catch-up fee, and moves the standing: overdue from the
// first unpaid epoch, warning after GraceEpochs, eviction after
// GraceEpochs+WarningEpochs (epoch N+11 when N is the last paid one).
// acc is updated in place; an evicted account is left alone.
func Assess(acc *Account, now uint64, perEpoch, balance *big.Int, p Params) Settlement {
	p.fill()
	acc.norm()
	s := Settlement{Due: new(big.Int), FromPrepaid: new(big.Int), FromBalance: new(big.Int), Fee: new(big.Int), From: acc.Status, To: acc.Status}
	if acc.Status == StatusEvicted {
		return s
	}
	if now > acc.Charged {
		s.Epochs = now - acc.Charged
		acc.Charged = now
	}
	s.Due.Mul(perEpoch, new(big.Int).SetUint64(s.Epochs))
	owed := new(big.Int).Add(acc.Debt, s.Due)
	s.FromPrepaid = minBig(acc.Prepaid, owed)
	owed.Sub(owed, s.FromPrepaid)
	acc.Prepaid.Sub(acc.Prepaid, s.FromPrepaid)
	if balance.Sign() > 0 {
		s.FromBalance = minBig(balance, owed)
		owed.Sub(owed, s.FromBalance)
	}
	// The old debt is paid first: what remains unpaid of the new rent is
	// missed rent, which carries the catch-up fee.
	missed := minBig(owed, s.Due)
	s.Fee.Mul(missed, new(big.Int).SetUint64(p.CatchUpBps))
	s.Fee.Quo(s.Fee, big.NewInt(10_000))
	acc.Debt = owed.Add(owed, s.Fee)
	switch {
	case acc.Debt.Sign() == 0:
		acc.OverdueSince, acc.Status = 0, StatusActive
	default:
		if acc.OverdueSince == 0 {
			acc.OverdueSince = max(now, 1)
		}
		age := uint64(0)
		if now > acc.OverdueSince {
			age = now - acc.OverdueSince
		}
		switch {
		case age >= p.GraceEpochs+p.WarningEpochs:
			acc.Status, s.Evict = StatusWarning, true
		case age >= p.GraceEpochs:
			acc.Status = StatusWarning
		default:
			acc.Status = StatusOverdue
		}
	}
	s.To = acc.Status
	return s
}

// EvictEpoch is the epoch at which an account overdue since epoch since is
// evicted.
func EvictEpoch(since uint64, p Params) uint64 {
	p.fill()
	return since + p.GraceEpochs + p.WarningEpochs
}

func minBig(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return new(big.Int).Set(a)
	}
	return new(big.Int).Set(b)
}
