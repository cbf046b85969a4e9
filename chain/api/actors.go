package api

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

var errNoActor = errors.New("no actor at this address")

func (s *Server) registerActorRoutes(v1 *gin.RouterGroup) {
	v1.GET("/actors/:address", s.actor)
	v1.GET("/actors/:address/code", s.actorCode)
	v1.GET("/actors/:address/state", s.actorState)
	v1.POST("/actors/:address/query", s.query)
	v1.GET("/libraries/:publisher", s.libraries)
	v1.GET("/code/:hash", s.codeByHash)
}

func readActor(v *store.View, a types.Address) (*state.Account, error) {
	acc, err := state.ReadAccount(v, a)
	if err != nil {
		return nil, err
	}
	if acc.CodeHash == nil {
		return nil, fmt.Errorf("%s: %w: %w", a, errNoActor, store.ErrNotFound)
	}
	return acc, nil
}

func (s *Server) actor(c *gin.Context) {
	a, ok := parseAddress(c, c.Param("address"))
	if !ok {
		return
	}
	var out apitypes.Actor
	err := s.b.View(func(v *store.View) error {
		acc, err := readActor(v, a)
		if err != nil {
			return err
		}
		code, _, err := v.Get(state.CodeKey(*acc.CodeHash))
		if err != nil {
			return err
		}
		out = apitypes.Actor{Address: a, CodeHash: *acc.CodeHash, CodeSize: len(code), Balance: acc.Balance.String(),
			Height: v.Head().Height}
		if out.Owner, err = s.b.ActorOwner(v, a); err != nil {
			return err
		}
		if out.Pins, err = s.b.ActorPins(v, a); err != nil {
			return err
		}
		meta, err := s.b.ActorMeta(v, a)
		if err != nil {
			return err
		}
		out.StorageBytes = meta.StorageBytes
		req, err := s.b.ActorRequires(v, a)
		if err != nil {
			return err
		}
		out.Requires = []apitypes.ActorRequirement{}
		for _, r := range req {
			out.Requires = append(out.Requires, apitypes.ActorRequirement{Entitlement: r.Name(), Params: r.Params,
				Inheritable: r.Inheritable, Action: r.Action.String()})
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) actorCode(c *gin.Context) {
	a, ok := parseAddress(c, c.Param("address"))
	if !ok {
		return
	}
	var code []byte
	err := s.b.View(func(v *store.View) error {
		acc, err := readActor(v, a)
		if err != nil {
			return err
		}
		code, _, err = v.Get(state.CodeKey(*acc.CodeHash))
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.Data(http.StatusOK, "text/x-python; charset=utf-8", code)
}

func (s *Server) codeByHash(c *gin.Context) {
	h, err := types.ParseHash(c.Param("hash"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	var code []byte
	var found bool
	err = s.b.View(func(v *store.View) error {
		code, found, err = v.Get(state.CodeKey(h))
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	if !found {
		fail(c, http.StatusNotFound, apitypes.CodeNotFound, "no code blob "+h.String())
		return
	}
	c.Data(http.StatusOK, "text/x-python; charset=utf-8", code)
}

// actorState lists an actor's storage (?prefix= hex or ?key_text=, ?cursor=, ?limit=).
func (s *Server) actorState(c *gin.Context) {
	a, ok := parseAddress(c, c.Param("address"))
	if !ok {
		return
	}
	var sub []byte
	if p := c.Query("prefix"); p != "" {
		b, err := hex.DecodeString(trim0x(p))
		if err != nil {
			fail(c, http.StatusBadRequest, apitypes.CodeBadRequest, "prefix must be hex")
			return
		}
		sub = b
	} else if k := c.Query("key_text"); k != "" {
		sub = []byte(k)
	}
	limit, ok := queryUint(c, "limit")
	if !ok {
		return
	}
	if limit == 0 || limit > 1000 {
		limit = 100
	}
	var after []byte
	if cur := c.Query("cursor"); cur != "" {
		b, err := hex.DecodeString(cur)
		if err != nil {
			fail(c, http.StatusBadRequest, apitypes.CodeBadCursor, "cursor must be hex")
			return
		}
		after = b
	}
	out := apitypes.ActorState{Entries: []apitypes.StateEntry{}}
	errStop := errors.New("page full")
	err := s.b.View(func(v *store.View) error {
		if _, err := readActor(v, a); err != nil {
			return err
		}
		out.Height = v.Head().Height
		base := state.Key(state.PrefixStorage, a[:])
		err := v.Scan(append(append([]byte(nil), base...), sub...), func(k, val []byte) error {
			key := k[len(base):]
			if after != nil && string(key) <= string(after) {
				return nil
			}
			if uint64(len(out.Entries)) == limit {
				out.NextCursor = hex.EncodeToString(out.Entries[len(out.Entries)-1].Key)
				return errStop
			}
			e := apitypes.StateEntry{Key: key, Value: val, Decoded: cborJSON(val)}
			if utf8.Valid(key) {
				e.KeyText = string(key)
			}
			out.Entries = append(out.Entries, e)
			return nil
		})
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func trim0x(s string) string {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:]
	}
	return s
}

// ErrQueryFailed is a query whose handler failed; the message carries the
// actor's deterministic error.
var ErrQueryFailed = types.NewError("query_failed", "query handler failed")

func (s *Server) query(c *gin.Context) {
	a, ok := parseAddress(c, c.Param("address"))
	if !ok {
		return
	}
	var req apitypes.Query
	if err := c.ShouldBindJSON(&req); err != nil {
		fail(c, http.StatusBadRequest, apitypes.CodeBadJSON, "body must be {\"handler\": \"…\", \"args\": \"0x<cbor>\"}: "+err.Error())
		return
	}
	if req.Handler == "" {
		fail(c, http.StatusBadRequest, apitypes.CodeBadRequest, "handler is required")
		return
	}
	if len(req.Args) > 0 {
		if err := codec.Valid(req.Args); err != nil {
			fail(c, http.StatusBadRequest, types.ErrBadPayload.Code, "args must be canonical CBOR: "+err.Error())
			return
		}
	}
	err := s.b.View(func(v *store.View) error { _, err := readActor(v, a); return err })
	if err != nil {
		failErr(c, err)
		return
	}
	ret, cycles, height, err := s.b.Query(c.Request.Context(), a, req.Caller, req.Handler, req.Args)
	if err != nil {
		if execution.IsActorError(err) {
			failErr(c, fmt.Errorf("%w: %v", ErrQueryFailed, err))
			return
		}
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, apitypes.QueryResult{Return: ret, Decoded: cborJSON(ret), CyclesUsed: cycles, Height: height})
}

func (s *Server) libraries(c *gin.Context) {
	a, ok := parseAddress(c, c.Param("publisher"))
	if !ok {
		return
	}
	out := []apitypes.Library{}
	err := s.b.View(func(v *store.View) error {
		libs, err := s.b.Libraries(v, a)
		for _, l := range libs {
			out = append(out, apitypes.Library{Publisher: l.Publisher, Name: l.Name, CodeHash: l.CodeHash, CodeSize: l.CodeSize, PublishedAt: l.PublishedAt})
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
