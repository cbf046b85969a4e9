package api

import (
	"encoding/binary"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerStorageRoutes(v1 *gin.RouterGroup) {
	v1.GET("/relays", s.relays)
	v1.GET("/relays/:id", s.relay)
	v1.GET("/relays/:id/challenges", s.relayChallenges)
	v1.GET("/volumes/:id", s.volume)
	v1.GET("/volumes/:id/revoked/:token", s.revoked)
	v1.GET("/volumes/:id/moved", s.volumeMoved)
}

func relayJSON(v *store.View, r *storage.Relay, p execution.StorageParams) (apitypes.Relay, error) {
	height := v.Head().Height
	st, err := storage.ReadRelayStats(v, r.ID)
	if err != nil {
		return apitypes.Relay{}, err
	}
	status := "active"
	if r.Status != storage.RelayActive {
		status = "exited"
		if st.UnbondAt != 0 {
			status = "unbonding"
		}
	}
	flagged := st.Flagged(p.Epoch(height))
	return apitypes.Relay{ID: r.ID, Addr: r.Addr, PubKey: r.PubKey, Capacity: r.Capacity, Used: r.Used, Stake: r.Stake.String(),
		RegisteredAt: r.RegisteredAt, LastHeartbeat: r.LastHeartbeat, Status: status,
		Healthy: r.Healthy(height, p.HeartbeatTimeout) && !flagged, Height: height, HeartbeatTimeout: p.HeartbeatTimeout,
		Challenges: &apitypes.RelayChallengeStats{Answered: st.Answered, Failed: st.Failed, Missed: st.Missed,
			Consecutive: st.Consecutive, Reputation: st.Reputation, Flagged: flagged, FlaggedUntil: st.FlaggedUntil,
			Earned: st.Earned.String(), Slashed: st.Slashed.String(), UnbondAt: st.UnbondAt}}, nil
}

func challengeJSON(c *storage.Challenge) apitypes.ChallengeInfo {
	return apitypes.ChallengeInfo{Volume: c.Volume, Relay: c.Relay, Epoch: c.Epoch, Version: c.Version, Issued: c.Issued,
		Deadline: c.Deadline, Seed: c.Seed, Bytes: c.Bytes, Count: c.Count, ShardsRoot: c.ShardsRoot, LeafIndex: c.LeafIndex(),
		Rent: c.Rent.String(), Status: storage.ChallengeStatusName(c.Status), Closed: c.Closed}
}

// relayChallenges lists a relay's challenges on record (the claim window):
// what a relay daemon answers and claims.
func (s *Server) relayChallenges(c *gin.Context) {
	id, ok := parseAddress(c, c.Param("id"))
	if !ok {
		return
	}
	p := s.b.StorageParams()
	out := apitypes.RelayChallenges{EpochBlocks: p.EpochBlocks, ResponseWindow: p.ResponseWindow, Challenges: []apitypes.ChallengeInfo{}}
	err := s.b.View(func(v *store.View) error {
		out.Height = v.Head().Height
		out.Epoch = p.Epoch(out.Height)
		prefix := storage.RelayChallengePrefix(id)
		return v.Scan(prefix, func(k, _ []byte) error {
			rest := k[len(prefix):]
			if len(rest) != 8+32 {
				return nil
			}
			ch, err := storage.ReadChallenge(v, binary.BigEndian.Uint64(rest), types.Hash(rest[8:]), id)
			if err != nil || ch == nil {
				return err
			}
			out.Challenges = append(out.Challenges, challengeJSON(ch))
			return nil
		})
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) relays(c *gin.Context) {
	out := []apitypes.Relay{}
	err := s.b.View(func(v *store.View) error {
		return v.Scan(storage.RelayPrefix(), func(_, val []byte) error {
			var r storage.Relay
			if err := codec.Unmarshal(val, &r); err != nil {
				return err
			}
			if c.Query("all") != "true" && r.Status != storage.RelayActive {
				return nil
			}
			rj, err := relayJSON(v, &r, s.b.StorageParams())
			if err != nil {
				return err
			}
			out = append(out, rj)
			return nil
		})
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) relay(c *gin.Context) {
	id, ok := parseAddress(c, c.Param("id"))
	if !ok {
		return
	}
	var out apitypes.Relay
	err := s.b.View(func(v *store.View) error {
		r, err := storage.ReadRelay(v, id)
		if err != nil {
			return err
		}
		if r == nil {
			return store.ErrNotFound
		}
		out, err = relayJSON(v, r, s.b.StorageParams())
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) volume(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_volume", err.Error())
		return
	}
	var out apitypes.Volume
	err = s.b.View(func(v *store.View) error {
		vol, err := storage.ReadVolume(v, id)
		if err != nil {
			return err
		}
		if vol == nil {
			return store.ErrNotFound
		}
		out = apitypes.Volume{ID: vol.ID, Owner: vol.Owner, K: vol.K, M: vol.M, Root: vol.Root, Version: vol.Version,
			Size: vol.Size, CreatedAt: vol.CreatedAt, UpdatedAt: vol.UpdatedAt}
		return volumeRent(v, s.b.StorageParams(), &out)
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) revoked(c *gin.Context) {
	vol, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_volume", err.Error())
		return
	}
	tok, err := types.ParseHash(c.Param("token"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_token", err.Error())
		return
	}
	out := apitypes.Revocation{Volume: vol, TokenID: tok}
	err = s.b.View(func(v *store.View) error {
		b, ok, err := v.Get(storage.RevokedKey(vol, tok))
		if err != nil || !ok {
			return err
		}
		out.Revoked = true
		if len(b) == 8 {
			out.Height = binary.BigEndian.Uint64(b)
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// volumeRent fills in a volume's escrow, placement and latest challenges.
func volumeRent(v *store.View, p execution.StorageParams, out *apitypes.Volume) error {
	acct, err := storage.ReadVolumeAccount(v, out.ID)
	if err != nil {
		return err
	}
	pl, err := storage.ReadPlacement(v, out.ID)
	if err != nil {
		return err
	}
	epoch := p.Epoch(v.Head().Height)
	var shardBytes uint64
	if pl != nil {
		for _, r := range pl.Relays {
			shardBytes += r.Bytes
			vp := apitypes.VolumePlacement{Relay: r.Relay, Version: pl.Version, Bytes: r.Bytes, Count: r.Count, ShardsRoot: r.ShardsRoot}
			// The latest challenge of this relay: this epoch's, else the last one's.
			for e := epoch; e+1 >= epoch && e > 0; e-- {
				ch, err := storage.ReadChallenge(v, e, out.ID, r.Relay)
				if err != nil {
					return err
				}
				if ch != nil {
					cj := challengeJSON(ch)
					vp.Challenge = &cj
					break
				}
			}
			out.Placement = append(out.Placement, vp)
		}
	}
	out.Rent = &apitypes.VolumeRent{Escrow: acct.Escrow.String(), RentPerEpoch: p.RentPerEpoch(pl).String(), ShardBytes: shardBytes,
		Arrears: acct.Arrears, GraceEpochs: p.GraceEpochs, Evicted: acct.Evicted, Funded: acct.Funded.String(),
		Paid: acct.Paid.String(), Refunded: acct.Refunded.String(), Epoch: epoch, EpochBlocks: p.EpochBlocks}
	return nil
}
