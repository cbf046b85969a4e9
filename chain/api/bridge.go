package api

import (
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/ethbridge"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerBridgeRoutes(v1 *gin.RouterGroup) {
	v1.GET("/bridge/subscriptions/:addr", s.bridgeSubscriptions)
}

func (s *Server) bridgeSubscriptions(c *gin.Context) {
	a, err := types.ParseAddress(c.Param("addr"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_address", err.Error())
		return
	}
	out := []apitypes.BridgeSubscription{}
	err = s.b.View(func(v *store.View) error {
		subs, err := ethbridge.Subscriptions(v, a)
		for _, x := range subs {
			out = append(out, apitypes.BridgeSubscription{Actor: x.Actor, ChainID: x.ChainID, Contract: x.Contract, Topic: x.Topic,
				Handler: x.Handler, Balance: decStr(x.Balance), Delivered: x.Delivered})
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
