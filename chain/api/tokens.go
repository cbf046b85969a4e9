package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerTokenRoutes(v1 *gin.RouterGroup) {
	v1.GET("/tokens", s.tokenList)
	v1.GET("/tokens/:id", s.token)
	v1.GET("/tokens/:id/balances/:addr", s.tokenBalance)
}

func tokenJSON(t *tokens.Token) apitypes.Token {
	return apitypes.Token{ID: t.ID, Name: t.Name, Symbol: t.Symbol, Decimals: t.Decimals, Cap: decStr(t.Cap),
		Supply: decStr(t.Supply), Admin: t.Admin, CreatedAt: t.CreatedAt}
}

func (s *Server) tokenList(c *gin.Context) {
	out := []apitypes.Token{}
	err := s.b.View(func(v *store.View) error {
		ts, err := tokens.List(v)
		for i := range ts {
			out = append(out, tokenJSON(&ts[i]))
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func readToken(v *store.View, id types.Hash) (*tokens.Token, error) {
	t, err := tokens.Read(v, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errors.Join(store.ErrNotFound, fmt.Errorf("no token %s", id))
	}
	return t, nil
}

func (s *Server) token(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	var out apitypes.Token
	err = s.b.View(func(v *store.View) error {
		t, err := readToken(v, id)
		if err == nil {
			out = tokenJSON(t)
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) tokenBalance(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	holder, err := types.ParseAddress(c.Param("addr"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_address", err.Error())
		return
	}
	out := apitypes.TokenBalance{Token: id, Holder: holder}
	if sp := c.Query("spender"); sp != "" {
		a, err := types.ParseAddress(sp)
		if err != nil {
			fail(c, http.StatusBadRequest, "bad_address", err.Error())
			return
		}
		out.Spender = &a
	}
	err = s.b.View(func(v *store.View) error {
		if _, err := readToken(v, id); err != nil {
			return err
		}
		b, err := tokens.BalanceOf(v, id, holder)
		if err != nil {
			return err
		}
		out.Balance = decStr(b)
		if out.Spender != nil {
			a, err := tokens.Allowance(v, id, holder, *out.Spender)
			if err != nil {
				return err
			}
			out.Allowance = decStr(a)
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
