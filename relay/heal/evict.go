package heal

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// retain applies the eviction retention to vol: once the Storage Manager
// has evicted it (its rent went unpaid past the grace epochs) for
// Retention, every object the relay holds of it is deleted. It reports
// whether the volume is evicted (nothing to heal).
func (s *Service) retain(vol [32]byte, pl *Placement, rep *Report) (bool, error) {
	if pl == nil || !pl.Evicted {
		delete(s.evicted, vol) // unknown to the chain, live, or revived
		return false, nil
	}
	if s.cfg.Retention <= 0 {
		return true, nil
	}
	now := s.cfg.Now()
	since, ok := s.evicted[vol]
	if !ok {
		s.evicted[vol] = now
		s.log.Info("volume evicted; its shards are deleted after the retention period", "volume", fmt.Sprintf("%x", vol[:6]), "retention", s.cfg.Retention)
		return true, nil
	}
	if now.Sub(since) < s.cfg.Retention {
		return true, nil
	}
	n, err := deleteVolume(s.cfg.Store, vol)
	rep.Deleted += n
	if err == nil {
		delete(s.evicted, vol)
		s.log.Info("deleted an evicted volume", "volume", fmt.Sprintf("%x", vol[:6]), "objects", n)
	}
	return true, err
}

// deleteVolume deletes every object of vol the store holds.
func deleteVolume(st *store.Store, vol [32]byte) (int, error) {
	n := 0
	var errs []error
	for k := wire.KindShard; k <= wire.KindStripes; k++ {
		objs, err := st.List(vol, k, 0)
		if err != nil {
			return n, err
		}
		for _, o := range objs {
			if err := st.Delete(vol, o.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				errs = append(errs, err)
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}
