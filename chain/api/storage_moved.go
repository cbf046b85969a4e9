package api

import (
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

// volumeMoved lists the shards of a volume that relays moved by repair
// (GET /v1/volumes/:id/moved): where CBFS readers find them.
func (s *Server) volumeMoved(c *gin.Context) {
	vol, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_volume", err.Error())
		return
	}
	out := apitypes.MovedShards{Volume: vol, Shards: []apitypes.MovedShard{}}
	prefix := storage.MovedPrefix(vol)
	err = s.b.View(func(v *store.View) error {
		return v.Scan(prefix, func(k, b []byte) error {
			var m storage.Moved
			if err := codec.Unmarshal(b, &m); err != nil {
				return err
			}
			out.Shards = append(out.Shards, apitypes.MovedShard{Shard: types.Hash(k[len(prefix):]), Origin: m.Origin, Holder: m.Holder,
				Hash: m.Hash, Size: m.Size, Height: m.Height, Repairer: m.Repairer})
			return nil
		})
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
