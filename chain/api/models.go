package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerModelRoutes(v1 *gin.RouterGroup) {
	v1.GET("/models", s.modelList)
	v1.GET("/models/:id", s.model)
}

func modelJSON(m *models.Model) apitypes.Model {
	status := "active"
	if m.Status == models.StatusRetired {
		status = "retired"
	}
	return apitypes.Model{ID: m.ID, Weights: m.Weights, Arch: m.Arch, Tokenizer: m.Tokenizer, License: m.License, Name: m.Name, URI: m.URI,
		Publisher: m.Publisher, Deposit: decStr(m.Deposit), PublishedAt: m.PublishedAt, Status: status, ReleaseAt: m.ReleaseAt,
		Banned: m.Banned, BanReason: m.BanReason}
}

func (s *Server) modelList(c *gin.Context) {
	out := []apitypes.Model{}
	err := s.b.View(func(v *store.View) error {
		ms, err := models.List(v)
		for i := range ms {
			out = append(out, modelJSON(&ms[i]))
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) model(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	var out apitypes.Model
	err = s.b.View(func(v *store.View) error {
		m, err := models.Read(v, id)
		if err != nil {
			return err
		}
		if m == nil {
			return errors.Join(store.ErrNotFound, fmt.Errorf("model %s is not registered", id))
		}
		out = modelJSON(m)
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
