package relay

import (
	"context"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// authorizePeer checks a relay-signed peer request (wire.PeerToken): the
// signer must be an active registered relay other than this one, and the
// request a shard GET, HAS or PUT. Repair needs no more: shards are
// ciphertext, checked against their hash on PUT.
func (n *Node) authorizePeer(ctx context.Context, req *wire.Request) error {
	if req.Kind != wire.KindShard || (req.Op != wire.OpGet && req.Op != wire.OpHas && req.Op != wire.OpPut) {
		return fail(wire.StatusUnauthorized, "peer requests may only get, check or put shards")
	}
	d := captoken.RequestDigest(req.SigningHash())
	pub, err := crypto.SigToPub(d[:], req.Sig)
	if err != nil {
		return fail(wire.StatusUnauthorized, "peer signature: %v", err)
	}
	signer := types.PubkeyToAddress(*pub)
	if signer == n.addr {
		return fail(wire.StatusUnauthorized, "peer request signed by this relay")
	}
	if n.cfg.Peers == nil {
		return fail(wire.StatusUnauthorized, "this relay accepts no peer requests (no relay registry)")
	}
	ok, err := n.cfg.Peers(ctx, signer)
	if err != nil {
		return fail(wire.StatusUnavailable, "peer check: %v", err)
	}
	if !ok {
		return fail(wire.StatusUnauthorized, "peer %s is not an active registered relay", signer)
	}
	return nil
}
