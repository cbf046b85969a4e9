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
const guestServing = 8

// fromGuest handles a message of a guest; it reports false for kinds a
// guest may not send, which are dropped.
func (v *validator) fromGuest(in p2p.Inbound) bool {
	switch in.Kind {
	case p2p.KindTx:
		select {
		case v.txIn <- in.Data:
		default:
			v.log.Debug("guest's transactions dropped: admission behind", "from", in.From)
		}
		return true
	case p2p.KindSync:
		v.onSyncRequest(in)
		return true
	}
	return false
}

// serveGuest answers a guest's sync request on its own connection with
// rep and the records asked for, always (an empty answer tells it how far
// the network is and where the validators are), off the loop. When
// guestServing answers are in flight the request is dropped; the guest
// asks again.
func (v *validator) serveGuest(to int, req syncRequest, rep syncReply) {
	select {
	case v.guestSem <- struct{}{}:
	default:
		return
	}
	v.goTracked(func() {
		defer func() { <-v.guestSem }()
		var err error
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
