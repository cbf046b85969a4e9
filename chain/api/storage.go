package api

import (
	"encoding/binary"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerStorageRoutes(v1 *gin.RouterGroup) {
	v1.GET("/relays", s.relays)
	v1.GET("/relays/:id", s.relay)
	v1.GET("/volumes/:id", s.volume)
	v1.GET("/volumes/:id/revoked/:token", s.revoked)
}

func relayJSON(r *execution.Relay, height, heartbeatTimeout uint64) apitypes.Relay {
	status := "active"
	if r.Status != execution.RelayActive {
		status = "exited"
	}
	return apitypes.Relay{ID: r.ID, Addr: r.Addr, PubKey: r.PubKey, Capacity: r.Capacity, Used: r.Used, Stake: r.Stake.String(),
		RegisteredAt: r.RegisteredAt, LastHeartbeat: r.LastHeartbeat, Status: status,
		Healthy: r.Healthy(height, heartbeatTimeout), Height: height}
}

func (s *Server) relays(c *gin.Context) {
	out := []apitypes.Relay{}
	err := s.node.Store().View(func(v *store.View) error {
		h := v.Head().Height
		return v.Scan(execution.RelayPrefix(), func(_, val []byte) error {
			var r execution.Relay
			if err := codec.Unmarshal(val, &r); err != nil {
				return err
			}
			if c.Query("all") != "true" && r.Status != execution.RelayActive {
				return nil
			}
			out = append(out, relayJSON(&r, h, s.node.Executor().StorageParams().HeartbeatTimeout))
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
	err := s.node.Store().View(func(v *store.View) error {
		r, err := execution.ReadRelay(v, id)
		if err != nil {
			return err
		}
		if r == nil {
			return store.ErrNotFound
		}
		out = relayJSON(r, v.Head().Height, s.node.Executor().StorageParams().HeartbeatTimeout)
		return nil
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
	err = s.node.Store().View(func(v *store.View) error {
		vol, err := execution.ReadVolume(v, id)
		if err != nil {
			return err
		}
		if vol == nil {
			return store.ErrNotFound
		}
		out = apitypes.Volume{ID: vol.ID, Owner: vol.Owner, K: vol.K, M: vol.M, Root: vol.Root, Version: vol.Version,
			Size: vol.Size, CreatedAt: vol.CreatedAt, UpdatedAt: vol.UpdatedAt}
		return nil
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
	err = s.node.Store().View(func(v *store.View) error {
		b, ok, err := v.Get(execution.RevokedKey(vol, tok))
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
