package api

import (
	"errors"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/timers"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerTimerRoutes(v1 *gin.RouterGroup) {
	v1.GET("/timers", s.timerList)
	v1.GET("/timers/stats", s.timerStats)
	v1.GET("/timers/:id", s.timer)
}

func timerJSON(t *timers.Timer, queueHeight uint64) apitypes.Timer {
	out := apitypes.Timer{ID: t.ID, Owner: t.Owner, Handler: t.Handler, Data: t.Data, Target: t.Target,
		Interval: t.Interval, Deposit: t.Deposit.String(), GBA: t.GBA, Deferrals: t.Deferrals, CreatedAt: t.CreatedAt,
		Due: t.Target <= queueHeight}
	if out.Data == nil {
		out.Data = types.Bytes{}
	}
	if len(t.Data) > 0 {
		out.Decoded = cborJSON(t.Data)
	}
	return out
}

// timerView runs fn over the queue and the latest state.
func (s *Server) timerView(fn func(q *timers.Queue, kv timers.KV, st timers.Stats) error) error {
	q := s.b.Timers()
	return s.b.View(func(v *store.View) error {
		kv := state.NewOverlay(v) // read-only use: the overlay is discarded
		st, err := q.Stats(kv)
		if err != nil {
			return err
		}
		return fn(q, kv, st)
	})
}

func (s *Server) timerList(c *gin.Context) {
	raw := c.Query("owner")
	if raw == "" {
		fail(c, http.StatusBadRequest, apitypes.CodeBadRequest, "GET /v1/timers needs ?owner=0x… (an actor address)")
		return
	}
	owner, ok := parseAddress(c, raw)
	if !ok {
		return
	}
	out := apitypes.TimerList{Owner: owner, Timers: []apitypes.Timer{}}
	err := s.timerView(func(q *timers.Queue, kv timers.KV, st timers.Stats) error {
		ts, err := q.ListByOwner(kv, owner)
		if err != nil {
			return err
		}
		out.Height = st.Height
		for i := range ts {
			out.Timers = append(out.Timers, timerJSON(&ts[i], st.Height))
		}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) timer(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	var out apitypes.Timer
	err = s.timerView(func(q *timers.Queue, kv timers.KV, st timers.Stats) error {
		t, err := q.Get(kv, id)
		if errors.Is(err, timers.ErrNotFound) {
			return errors.Join(store.ErrNotFound, err)
		}
		if err != nil {
			return err
		}
		out = timerJSON(&t, st.Height)
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) timerStats(c *gin.Context) {
	var out apitypes.TimerStats
	err := s.timerView(func(q *timers.Queue, _ timers.KV, st timers.Stats) error {
		p := q.Params()
		out = apitypes.TimerStats{Height: st.Height, Basefee: st.Basefee, Tier1: st.Tier1, Tier2: st.Tier2, Tier3: st.Tier3,
			Due: st.Due, Depth: st.Depth(), BaseDeposit: p.Deposit(0).String(),
			LaneBudget: s.b.TimerLaneBudget(), MaxPerOwner: p.MaxPerOwner}
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
