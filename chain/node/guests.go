package node

import (
	"context"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
)

// Full nodes connect to validators as guests (p2p.GuestBase and up): a
// validator admits their transactions like gossip and answers their block
// sync requests, off the consensus loop, and ignores everything else they
// send. A guest never votes, so it never counts as a peer.

// maxGuests is how many full nodes a validator serves at once.
const maxGuests = 64

// guestServing bounds the sync answers to guests in flight.
const guestServing = 16

// guestPark is how long a validator holds a full node's request for
// blocks it does not have yet (a long poll): the answer leaves as soon as
// the next block is final, so a full node is a network hop behind, not a
// polling interval; with nothing new by then, the answer is empty.
const guestPark = time.Second

// parkedSync is a guest's request waiting for its next block.
type parkedSync struct {
	to  int
	req syncRequest
	at  time.Time
}

// fromGuest handles a message of a guest; it reports false for kinds a
// guest may not send, which are dropped.
func (v *validator) fromGuest(in p2p.Inbound) bool {
	switch in.Kind {
	case p2p.KindTx:
		select {
		case v.txIn <- in.Data:
		default:
			v.log.Debug("guest's transactions dropped: admission behind", "from", in.From)
			v.n.admit.dropped.Add(1)
		}
		return true
	case p2p.KindSync:
		v.onSyncRequest(in)
		return true
	case p2p.KindSnapshot:
		v.serveSnapshot(in) // snapshotserve.go
		return true
	}
	return false
}

// serveGuest answers a guest's sync request on its own connection with
// rep and the records asked for, always (an empty answer tells it how far
// the network is and where the validators are), off the loop. When
// guestServing answers are in flight the request is dropped; the guest
// asks again.
func (v *validator) serveGuest(to int, req syncRequest, rep syncReply) bool {
	select {
	case v.guestSem <- struct{}{}:
	default:
		return false
	}
	v.goTracked(func() {
		defer func() { <-v.guestSem }()
		var err error
		if rep.Handoff, err = handoffAsked(v.flog, req); err != nil {
			v.log.Warn("serve a full node's hand-off request", "guest", to, "err", err)
		}
		if rep.Records, err = v.flog.Range(req.From, 256, 4<<20); err != nil {
			v.log.Warn("serve a full node's sync request", "guest", to, "err", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := v.tr.Send(ctx, to, p2p.KindSyncReply, codec.MustMarshal(&rep)); err != nil {
			v.log.Debug("answer a full node", "guest", to, "err", err)
		}
	})
	return true
}

// onGuestSync answers a guest's sync request, or parks it while the
// blocks it asks for are not final yet.
func (v *validator) onGuestSync(to int, req syncRequest) {
	if req.From > v.root.Height && len(v.parked) < maxGuests {
		v.parked = append(v.parked, parkedSync{to: to, req: req, at: time.Now()})
		return
	}
	v.serveGuest(to, req, v.guestReply())
}

// serveParked answers the parked requests that can be answered: once a
// block is final (expired false) those it has blocks for, on a tick those
// parked guestPark ago. A request that finds every answer slot busy stays
// parked.
func (v *validator) serveParked(expired bool) {
	if len(v.parked) == 0 {
		return
	}
	rep := v.guestReply()
	kept := v.parked[:0]
	for _, p := range v.parked {
		due := p.req.From <= v.root.Height
		if expired {
			due = time.Since(p.at) >= guestPark
		}
		if !due || !v.serveGuest(p.to, p.req, rep) {
			kept = append(kept, p)
		}
	}
	v.parked = kept
}

func (v *validator) guestReply() syncReply {
	return syncReply{Finalized: v.root.Height, Validators: v.memberAddrs()}
}

// memberAddrs lists the epoch's validators with the addresses this
// validator knows (its own included), for a full node.
func (v *validator) memberAddrs() []validatorAddr {
	addrs := v.tr.Addrs()
	var out []validatorAddr
	for i, m := range v.ep.Members {
		a := addrs[i]
		if i == v.self {
			a = v.listenAddr()
		}
		if a != "" {
			out = append(out, validatorAddr{Address: m.Address, Addr: a})
		}
	}
	return out
}
