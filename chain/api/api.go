// Package api serves a node's HTTP API with gin: status, accounts,
// transaction submission and lookup, blocks, events, state proofs, the
// devnet faucet, and a resumable Server-Sent Events stream of blocks. Every
// route is documented in docs/API.md; every error is JSON with a stable code.
package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/explorer"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/gin-gonic/gin"
)

// Version is reported by /v1/status.
var Version = version.String()

// Server is the HTTP API of one node.
type Server struct {
	b         Backend
	log       *slog.Logger
	engine    *gin.Engine
	heartbeat time.Duration
}

// New builds the router for n.
func New(n *node.Node, log *slog.Logger) *Server { return NewWithBackend(NodeBackend{N: n}, log) }

// NewWithBackend builds the router over b.
func NewWithBackend(b Backend, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(gin.Recovery(), func(c *gin.Context) {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes)
		c.Next()
	})
	e.HandleMethodNotAllowed = true
	s := &Server{b: b, log: log, engine: e, heartbeat: 15 * time.Second}
	e.NoRoute(func(c *gin.Context) {
		fail(c, http.StatusNotFound, apitypes.CodeRouteNotFound, fmt.Sprintf("no route %s %s", c.Request.Method, c.Request.URL.Path))
	})
	e.NoMethod(func(c *gin.Context) {
		fail(c, http.StatusMethodNotAllowed, apitypes.CodeRouteNotFound, fmt.Sprintf("method %s not allowed on %s", c.Request.Method, c.Request.URL.Path))
	})
	v1 := e.Group("/v1")
	v1.GET("/status", s.status)
	v1.GET("/fees", s.fees)
	v1.GET("/accounts/:address", s.account)
	v1.GET("/accounts/:address/proof", s.accountProof)
	v1.POST("/txs", s.submitTx)
	v1.GET("/txs/:hash", s.getTx)
	v1.GET("/blocks/:id", s.getBlock)
	v1.GET("/events", s.events)
	v1.GET("/proofs/:key", s.proof)
	v1.GET("/stream", s.stream)
	v1.POST("/faucet", s.faucet)
	s.registerActorRoutes(v1)
	s.registerStorageRoutes(v1)
	s.registerTimerRoutes(v1)
	s.registerOffchainRoutes(v1)
	s.registerTEERoutes(v1)
	s.registerLightRoutes(v1)
	s.registerModelRoutes(v1)
	s.registerTokenRoutes(v1)
	s.registerBridgeRoutes(v1)
	s.registerGovRoutes(v1)
	v1.GET("/validators", s.validatorSet)
	e.GET(explorer.Prefix, func(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, explorer.Prefix+"/") })
	e.GET(explorer.Prefix+"/*path", gin.WrapH(explorer.Handler()))
	return s
}

// Handler returns the http.Handler.
func (s *Server) Handler() http.Handler { return s.engine }

// MaxBodyBytes bounds request bodies: a hex transaction of max_tx_size plus
// JSON framing.
const MaxBodyBytes = 2*types.MaxTxSize + 4096

func fail(c *gin.Context, status int, code, msg string) {
	c.AbortWithStatusJSON(status, apitypes.Error{Error: apitypes.ErrorBody{Code: code, Message: msg}})
}

// failErr maps an error to its HTTP status and stable code.
func failErr(c *gin.Context, err error) {
	var te *types.Error
	switch {
	case errors.As(err, &te):
		fail(c, http.StatusBadRequest, te.Code, err.Error())
	case errors.Is(err, store.ErrNotFound):
		fail(c, http.StatusNotFound, apitypes.CodeNotFound, err.Error())
	case errors.Is(err, store.ErrBadCursor):
		fail(c, http.StatusBadRequest, apitypes.CodeBadCursor, err.Error())
	case errors.Is(err, store.ErrPruned):
		fail(c, http.StatusGone, apitypes.CodePruned, err.Error())
	default:
		fail(c, http.StatusInternalServerError, apitypes.CodeInternal, err.Error())
	}
}

func (s *Server) status(c *gin.Context) {
	var out apitypes.Status
	err := s.b.View(func(v *store.View) error {
		h := v.Head()
		bf, err := s.b.Basefees(v)
		if err != nil {
			return err
		}
		rec := func(name string) string {
			b, err := state.BigRecord(v, name)
			if err != nil {
				return "0"
			}
			return b.String()
		}
		out = apitypes.Status{
			ChainID: h.ChainID, Height: h.Height, HeadHash: h.Hash(),
			// One validator: a committed block is final.
			FinalizedHeight: h.Height, TimestampMs: h.Timestamp,
			BasefeeCycle: bf.Cycle, BasefeeCell: bf.Cell,
			PendingTxs: s.b.PendingTxs(), Faucet: s.b.HasFaucet(),
			GenesisSupply: rec(state.RecordGenesisSupply), Burned: rec(state.RecordBurned), Minted: rec(state.RecordMinted),
			Version: Version, CommittedHeight: h.Height,
		}
		if cs, ok := s.b.Consensus(); ok {
			out.FinalizedHeight = max(cs.FinalizedHeight, h.Height)
			out.CommittedHeight = max(cs.CommittedHeight, out.FinalizedHeight)
			out.Consensus = &apitypes.Consensus{Validator: cs.Validator, Index: cs.Index, Validators: cs.Validators, Round: cs.Round, Peers: cs.Peers, Epoch: cs.Epoch, EpochEnd: cs.EpochEnd, Role: cs.Role}
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) fees(c *gin.Context) {
	var out apitypes.Fees
	err := s.b.View(func(v *store.View) error {
		bf, err := s.b.Basefees(v)
		if err != nil {
			return err
		}
		f := s.b.Fees()
		out = apitypes.Fees{BasefeeCycle: bf.Cycle, BasefeeCell: bf.Cell, MaxTxCycles: f.MaxTxCycles, MaxTxCells: f.MaxTxCells}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func parseAddress(c *gin.Context, raw string) (types.Address, bool) {
	a, err := types.ParseAddress(raw)
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_address", err.Error())
		return a, false
	}
	return a, true
}

func (s *Server) account(c *gin.Context) {
	a, ok := parseAddress(c, c.Param("address"))
	if !ok {
		return
	}
	var out apitypes.Account
	err := s.b.View(func(v *store.View) error {
		acc, err := state.ReadAccount(v, a)
		if err != nil {
			return err
		}
		out = apitypes.Account{Address: a, Balance: acc.Balance.String(), Nonce: acc.Nonce,
			PendingNonce: s.b.PendingNonce(a, acc.Nonce), CodeHash: acc.CodeHash, Height: v.Head().Height}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) submitTx(c *gin.Context) {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, MaxBodyBytes+1))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		fail(c, http.StatusRequestEntityTooLarge, types.ErrTxTooLarge.Code, fmt.Sprintf("request body over %d bytes", MaxBodyBytes))
		return
	}
	if err != nil {
		fail(c, http.StatusBadRequest, apitypes.CodeBadRequest, "read body: "+err.Error())
		return
	}
	if len(body) > MaxBodyBytes {
		fail(c, http.StatusRequestEntityTooLarge, types.ErrTxTooLarge.Code, fmt.Sprintf("request body over %d bytes", MaxBodyBytes))
		return
	}
	var raw []byte
	if strings.HasPrefix(c.ContentType(), "application/cbor") {
		raw = body
	} else {
		var req apitypes.SubmitTx
		if err := json.Unmarshal(body, &req); err != nil {
			fail(c, http.StatusBadRequest, apitypes.CodeBadJSON, "body must be {\"tx\": \"<hex>\"}: "+err.Error())
			return
		}
		raw, err = hex.DecodeString(strings.TrimPrefix(req.Tx, "0x"))
		if err != nil {
			fail(c, http.StatusBadRequest, types.ErrMalformedTx.Code, "tx is not hex: "+err.Error())
			return
		}
	}
	h, err := s.b.SubmitTx(raw)
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, apitypes.SubmitTxResult{Hash: h})
}

func (s *Server) getTx(c *gin.Context) {
	h, err := types.ParseHash(c.Param("hash"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	var out apitypes.TxResult
	err = s.b.View(func(v *store.View) error {
		loc, tx, r, err := v.FindTx(h)
		if errors.Is(err, store.ErrNotFound) {
			if ptx, ok := s.b.PendingTx(h); ok {
				out = apitypes.TxResult{Status: apitypes.TxPending, Tx: txJSON(ptx)}
				return nil
			}
			return err
		}
		if err != nil {
			return err
		}
		hdr, err := v.Header(loc.Height)
		if err != nil {
			return err
		}
		bh := hdr.Hash()
		rj := receiptJSON(r, loc.Height, loc.Index)
		if tx == nil { // a timer receipt, past the block's transactions
			rj.Kind = apitypes.ReceiptKindTimer
			out = apitypes.TxResult{Status: apitypes.TxIncluded, Kind: apitypes.ReceiptKindTimer, BlockHeight: &loc.Height, BlockHash: &bh, Index: &loc.Index, Receipt: &rj}
			return nil
		}
		rj.Kind = apitypes.ReceiptKindTx
		out = apitypes.TxResult{Status: apitypes.TxIncluded, Kind: apitypes.ReceiptKindTx, Tx: txJSON(tx), BlockHeight: &loc.Height, BlockHash: &bh, Index: &loc.Index, Receipt: &rj}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func blockJSON(v *store.View, blk *types.Block, withReceipts bool) (apitypes.Block, error) {
	out := apitypes.Block{Hash: blk.Hash(), Header: blk.Header, TxHashes: make([]types.Hash, len(blk.Txs))}
	for i, t := range blk.Txs {
		out.TxHashes[i] = types.Keccak256(t)
	}
	rs, err := v.Receipts(blk.Header.Height)
	if err != nil {
		return out, err
	}
	for _, r := range rs[min(len(blk.Txs), len(rs)):] {
		out.TimerReceipts = append(out.TimerReceipts, r.TxHash)
	}
	if withReceipts {
		out.Receipts = make([]apitypes.Receipt, len(rs))
		for i, r := range rs {
			out.Receipts[i] = receiptJSON(r, blk.Header.Height, uint32(i))
			out.Receipts[i].Kind = apitypes.ReceiptKindTx
			if i >= len(blk.Txs) {
				out.Receipts[i].Kind = apitypes.ReceiptKindTimer
			}
		}
	}
	return out, nil
}

func (s *Server) getBlock(c *gin.Context) {
	id := c.Param("id")
	withReceipts := c.Query("receipts") == "true" || c.Query("receipts") == "1"
	var out apitypes.Block
	err := s.b.View(func(v *store.View) error {
		var blk *types.Block
		var err error
		switch {
		case id == "latest":
			blk, err = v.Block(v.Head().Height)
		case strings.HasPrefix(id, "0x") && len(id) == 66:
			h, perr := types.ParseHash(id)
			if perr != nil {
				return fmt.Errorf("%w: %v", errBadID, perr)
			}
			blk, err = v.BlockByHash(h)
		default:
			n, perr := strconv.ParseUint(id, 10, 64)
			if perr != nil {
				return fmt.Errorf("%w: %q is neither a height, a 0x block hash nor \"latest\"", errBadID, id)
			}
			blk, err = v.Block(n)
		}
		if err != nil {
			return err
		}
		out, err = blockJSON(v, blk, withReceipts)
		return err
	})
	if errors.Is(err, errBadID) {
		fail(c, http.StatusBadRequest, "bad_block_id", err.Error())
		return
	}
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

var errBadID = errors.New("invalid block id")

func queryUint(c *gin.Context, name string) (uint64, bool) {
	raw := c.Query(name)
	if raw == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		fail(c, http.StatusBadRequest, apitypes.CodeBadRequest, fmt.Sprintf("query %s=%q is not a non-negative integer", name, raw))
		return 0, false
	}
	return n, true
}

func (s *Server) events(c *gin.Context) {
	q := store.EventQuery{Topic: c.Query("topic"), Cursor: c.Query("cursor")}
	if a := c.Query("emitter"); a != "" {
		addr, ok := parseAddress(c, a)
		if !ok {
			return
		}
		q.Emitter = &addr
	}
	var ok bool
	if q.FromHeight, ok = queryUint(c, "from"); !ok {
		return
	}
	if q.ToHeight, ok = queryUint(c, "to"); !ok {
		return
	}
	limit, ok := queryUint(c, "limit")
	if !ok {
		return
	}
	q.Limit = int(min(limit, store.MaxEventPage))
	var out apitypes.Events
	err := s.b.View(func(v *store.View) error {
		recs, next, err := v.Events(q)
		if err != nil {
			return err
		}
		out.NextCursor = next
		out.Events = make([]apitypes.Event, len(recs))
		for i, r := range recs {
			h := r.TxHash
			out.Events[i] = eventJSON(r.Event, r.Height, &h, r.TxIndex, r.Index)
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) proveKey(c *gin.Context, key []byte) {
	var height *uint64
	if c.Query("height") != "" {
		h, ok := queryUint(c, "height")
		if !ok {
			return
		}
		height = &h
	}
	var out apitypes.Proof
	err := s.b.View(func(v *store.View) error {
		root, val, p, err := v.Prove(key, height)
		if err != nil {
			return err
		}
		h := v.Head().Height
		if height != nil {
			h = *height
		}
		out = apitypes.Proof{Key: key, Height: h, StateRoot: root, Proof: p}
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

func (s *Server) proof(c *gin.Context) {
	key, err := hex.DecodeString(strings.TrimPrefix(c.Param("key"), "0x"))
	if err != nil || len(key) == 0 {
		fail(c, http.StatusBadRequest, "bad_key", "state key must be non-empty hex")
		return
	}
	s.proveKey(c, key)
}

func (s *Server) accountProof(c *gin.Context) {
	a, ok := parseAddress(c, c.Param("address"))
	if !ok {
		return
	}
	s.proveKey(c, state.AccountKey(a))
}

func (s *Server) faucet(c *gin.Context) {
	var req apitypes.Faucet
	if err := c.ShouldBindJSON(&req); err != nil {
		fail(c, http.StatusBadRequest, apitypes.CodeBadJSON, "body must be {\"address\": \"0x…\", \"value\": \"<base units>\"}: "+err.Error())
		return
	}
	v, ok := new(big.Int).SetString(req.Value, 10)
	if !ok {
		fail(c, http.StatusBadRequest, apitypes.CodeBadRequest, fmt.Sprintf("value %q is not a decimal integer", req.Value))
		return
	}
	h, err := s.b.Faucet(req.Address, v)
	if errors.Is(err, node.ErrNoFaucet) {
		fail(c, http.StatusForbidden, node.ErrNoFaucet.Code, err.Error())
		return
	}
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, apitypes.SubmitTxResult{Hash: h})
}

// stream sends every block from ?from= (or after the Last-Event-ID header)
// onwards as an SSE "block" event carrying the block with its receipts and
// events, then follows the chain head. Event ids are heights, so a client
// that reconnects with Last-Event-ID resumes without gaps or repeats.
func (s *Server) stream(c *gin.Context) {
	next, ok := queryUint(c, "from")
	if !ok {
		return
	}
	if c.Query("from") == "" {
		h, err := s.b.Head()
		if err != nil {
			failErr(c, err)
			return
		}
		next = h.Height + 1
	}
	if id := c.GetHeader("Last-Event-ID"); id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			fail(c, http.StatusBadRequest, apitypes.CodeBadRequest, "Last-Event-ID must be a block height")
			return
		}
		next = n + 1
	}
	c.Header("Content-Type", "text/event-stream")
	c.Header("Cache-Control", "no-cache")
	c.Header("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	ctx := c.Request.Context()
	w := c.Writer
	beat := time.NewTicker(s.heartbeat)
	defer beat.Stop()
	for {
		wake := s.b.NewHead()
		sent, err := s.sendFrom(ctx, w, &next)
		if err != nil {
			s.log.Debug("stream ended", "err", err)
			return
		}
		if sent {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-beat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.Flush()
		}
	}
}

// sendFrom writes blocks from *next up to the head, at most 100 per call.
func (s *Server) sendFrom(ctx context.Context, w gin.ResponseWriter, next *uint64) (bool, error) {
	var batch []apitypes.Block
	err := s.b.View(func(v *store.View) error {
		for h := *next; h <= v.Head().Height && len(batch) < 100; h++ {
			blk, err := v.Block(h)
			if err != nil {
				return err
			}
			bj, err := blockJSON(v, blk, true)
			if err != nil {
				return err
			}
			batch = append(batch, bj)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	for _, b := range batch {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		data, err := json.Marshal(b)
		if err != nil {
			return false, err
		}
		if _, err := fmt.Fprintf(w, "id: %d\nevent: block\ndata: %s\n\n", b.Header.Height, data); err != nil {
			return false, err
		}
		*next = b.Header.Height + 1
	}
	if len(batch) > 0 {
		w.Flush()
	}
	return len(batch) > 0, nil
}
