package api

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

// LightBackend is what a backend that serves light-client proofs adds:
// the certified block a proof is anchored to (node.Node.LightAnchor).
type LightBackend interface {
	LightAnchor() (*consensus.Anchor, error)
	// LightHandoffs returns the epoch hand-offs from epoch from on, each
	// with the proof of the next validator set.
	LightHandoffs(from uint64, max int) ([]apitypes.LightHandoff, error)
}

// LightAnchor is the node's light-proof anchor.
func (b NodeBackend) LightAnchor() (*consensus.Anchor, error) { return b.N.LightAnchor() }

// LightHandoffs are the node's recorded epoch hand-offs.
func (b NodeBackend) LightHandoffs(from uint64, max int) ([]apitypes.LightHandoff, error) {
	return b.N.LightHandoffs(from, max)
}

// maxHandoffs is the page size of GET /v1/light/handoffs.
const maxHandoffs = 64

// codeNoAnchor is the API error code when the node cannot anchor a proof.
const codeNoAnchor = "no_anchor"

func (s *Server) registerLightRoutes(g *gin.RouterGroup) {
	g.GET("/light/proofs/:key", s.lightProof)
	g.GET("/light/handoffs", s.lightHandoffs)
}

// withLight runs fn on the light backend and answers the failure: false
// when the response is already written.
func (s *Server) withLight(c *gin.Context, fn func(LightBackend) error) bool {
	lb, ok := s.b.(LightBackend)
	if !ok {
		fail(c, http.StatusNotFound, codeNoAnchor, node.ErrNoAnchor.Error())
		return false
	}
	err := fn(lb)
	if errors.Is(err, node.ErrNoAnchor) {
		fail(c, http.StatusServiceUnavailable, codeNoAnchor, err.Error())
		return false
	}
	if err != nil {
		failErr(c, err)
		return false
	}
	return true
}

// lightHandoffs serves GET /v1/light/handoffs?from=K.
func (s *Server) lightHandoffs(c *gin.Context) {
	from, ok := queryUint(c, "from")
	if !ok {
		return
	}
	var hs []apitypes.LightHandoff
	if !s.withLight(c, func(lb LightBackend) (err error) {
		hs, err = lb.LightHandoffs(from, maxHandoffs)
		return err
	}) {
		return
	}
	out := apitypes.LightHandoffs{Handoffs: hs}
	c.JSON(http.StatusOK, out)
}

// lightProof serves GET /v1/light/proofs/{key}: the value and proof at the
// height the latest anchor commits to, the header of that height and the
// anchor.
func (s *Server) lightProof(c *gin.Context) {
	key, err := hex.DecodeString(strings.TrimPrefix(c.Param("key"), "0x"))
	if err != nil || len(key) == 0 {
		fail(c, http.StatusBadRequest, "bad_key", "state key must be non-empty hex")
		return
	}
	var a *consensus.Anchor
	if !s.withLight(c, func(lb LightBackend) (err error) {
		a, err = lb.LightAnchor()
		return err
	}) {
		return
	}
	p, err := consensus.DecodePayload(a.Block.Payload)
	if err != nil {
		failErr(c, err)
		return
	}
	h := p.Exec.Height
	out := apitypes.LightProof{Key: key, Height: h, Anchor: codec.MustMarshal(a)}
	err = s.b.View(func(v *store.View) error {
		hdr, err := v.Header(h)
		if err != nil {
			return err
		}
		if hdr.Hash() != p.Exec.Header {
			return fmt.Errorf("%w: this node's header %d differs from the certified one", consensus.ErrUncommitted, h)
		}
		out.Header = codec.MustMarshal(hdr)
		_, val, proof, err := v.Prove(key, &h)
		if err != nil {
			return err
		}
		out.Proof = proof
		if val != nil {
			b := types.Bytes(val)
			out.Value = &b
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
