package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Serving snapshots to full nodes (guests), off the consensus loop, in the
// same answer slots as block sync (guestServing).

// snapshotRequest asks for the offer of the newest snapshot (Offer),
// below height Below if that is not 0, or for chunk Chunk of the snapshot
// at Height.
type snapshotRequest struct {
	_      struct{} `cbor:",toarray"`
	Offer  bool
	Below  uint64
	Height uint64
	Chunk  uint32
}

// snapshotReply answers a snapshotRequest: the offer (nil: none to offer)
// or the chunk's bytes.
type snapshotReply struct {
	_      struct{} `cbor:",toarray"`
	Offer  *snapshotOffer
	Height uint64
	Chunk  uint32
	Data   []byte
}

// snapshotOffer is a snapshot's manifest with what makes its header
// verifiable from the genesis validator set alone: the finalized consensus
// records from the snapshot's height up to an anchor (a certified block
// whose payload commits to a header at or above the snapshot's, linked to
// it by parent hashes), the headers from the snapshot's up to the
// committed one, a light-client proof of the epoch record against that
// header and anchor, and the epoch hand-offs up to the anchor's epoch. The
// record at the snapshot's height is where block sync resumes.
type snapshotOffer struct {
	_        struct{} `cbor:",toarray"`
	Manifest snapshotManifest
	Records  []finalRecord
	Headers  []types.Header // the headers above the snapshot's up to the one the anchor commits to
	Proof    apitypes.LightProof
	Handoffs []apitypes.LightHandoff
}

func (v *validator) serveSnapshot(in p2p.Inbound) {
	var req snapshotRequest
	if err := codec.Unmarshal(in.Data, &req); err != nil {
		return
	}
	select {
	case v.guestSem <- struct{}{}:
	default:
		return // every slot busy: the full node asks again
	}
	v.goTracked(func() {
		defer func() { <-v.guestSem }()
		rep, err := v.n.answerSnapshot(v.flog, req)
		if err != nil {
			v.log.Debug("serve a snapshot request", "guest", in.From, "err", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := v.tr.Send(ctx, in.From, p2p.KindSnapshotReply, codec.MustMarshal(&rep)); err != nil {
			v.log.Debug("answer a snapshot request", "guest", in.From, "err", err)
		}
	})
}

// answerSnapshot builds the answer to a snapshot request from the
// snapshots on disk and the finalized-block log l (validators and full
// nodes serve the same).
func (n *Node) answerSnapshot(l *finalLog, req snapshotRequest) (snapshotReply, error) {
	rep := snapshotReply{Height: req.Height, Chunk: req.Chunk}
	var err error
	if req.Offer {
		rep.Offer, err = n.snapshotOffer(l, req.Below)
	} else {
		rep.Data, err = readChunk(SnapshotDir(n.cfg.Home), req.Height, req.Chunk)
	}
	return rep, err
}

// errNoSnapshotAnchor: no finalized block (yet) commits to a snapshot's
// header.
var errNoSnapshotAnchor = errors.New("node: no certified block commits to the snapshot's header")

// snapshotOffer builds the offer of the newest snapshot below height below
// (0: any) that can be verified (a certified block commits to its header);
// nil if none.
func (n *Node) snapshotOffer(l *finalLog, below uint64) (*snapshotOffer, error) {
	dir := SnapshotDir(n.cfg.Home)
	hs, err := snapshotHeights(dir)
	if err != nil {
		return nil, err
	}
	for _, h := range hs {
		if below != 0 && h >= below {
			continue
		}
		m, err := readManifest(dir, h)
		if err != nil {
			return nil, err
		}
		o, err := n.offerOf(l, m)
		if errors.Is(err, errNoSnapshotAnchor) {
			continue
		}
		return o, err
	}
	return nil, nil
}

func (n *Node) offerOf(l *finalLog, m *snapshotManifest) (*snapshotOffer, error) {
	o := &snapshotOffer{Manifest: *m}
	var anchor *finalRecord
	var exec uint64
	for h := m.Height; h <= m.Height+anchorSearch; h++ {
		r, err := l.Get(h)
		if errors.Is(err, errNoRecord) {
			break
		}
		if err != nil {
			return nil, err
		}
		o.Records = append(o.Records, *r)
		if h == m.Height {
			continue
		}
		if p, err := decodeCertified(r.Block.Payload); err == nil && p.Exec.Height >= m.Height {
			anchor, exec = r, p.Exec.Height
			break
		}
	}
	if anchor == nil {
		return nil, errNoSnapshotAnchor
	}
	a := consensus.Anchor{Block: anchor.Block, QC: anchor.QC}
	key := validators.EpochKey()
	epochLen := n.exec.Config().Validators.EpochLength
	err := n.store.View(func(v *store.View) error {
		if v.Height() < exec {
			return errNoSnapshotAnchor
		}
		for h := m.Height + 1; h <= exec; h++ {
			hdr, err := v.Header(h)
			if err != nil {
				return err
			}
			o.Headers = append(o.Headers, *hdr)
		}
		var err error
		if o.Proof, err = lightProofAt(v, key, exec, &a); err != nil {
			return err
		}
		for k := range consensus.EpochOf(anchor.Block.Height, epochLen) {
			ha, err := l.Handoff(k)
			if err != nil {
				return err
			}
			if ha == nil {
				return fmt.Errorf("%w: no hand-off recorded for epoch %d", errNoSnapshotAnchor, k)
			}
			h, err := lightHandoff(v, l, k, ha)
			if err != nil {
				return err
			}
			o.Handoffs = append(o.Handoffs, h)
		}
		return nil
	})
	return o, err
}

// lightProofAt is the light proof of key at height against anchor a.
func lightProofAt(v *store.View, key []byte, height uint64, a *consensus.Anchor) (apitypes.LightProof, error) {
	hdr, err := v.Header(height)
	if err != nil {
		return apitypes.LightProof{}, err
	}
	_, val, proof, err := v.Prove(key, &height)
	if err != nil {
		return apitypes.LightProof{}, err
	}
	lp := apitypes.LightProof{Key: key, Height: height, Proof: proof, Header: codec.MustMarshal(hdr), Anchor: codec.MustMarshal(a)}
	if val != nil {
		b := types.Bytes(val)
		lp.Value = &b
	}
	return lp, nil
}
