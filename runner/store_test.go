package runner

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestStoreJobsAndPushes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runner.db")
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	id := types.Hash{1}
	if err := s.PutJob(&JobRecord{ID: id, Retry: 1, State: StateCommitted}); err != nil {
		t.Fatal(err)
	}
	// An older attempt can no longer write over a re-selection.
	if err := s.PutJob(&JobRecord{ID: id, Retry: 0, State: StateDone}); !errors.Is(err, ErrSuperseded) {
		t.Fatalf("stale attempt written: %v", err)
	}
	for _, a := range []types.Address{{3}, {2}} {
		if err := s.PutPush(id, &verify.Reveal{Runner: a, Result: []byte("r")}); err != nil {
			t.Fatal(err)
		}
	}
	// Pushes of another job sharing a prefix byte stay apart.
	if err := s.PutPush(types.Hash{1, 1}, &verify.Reveal{Runner: types.Address{9}}); err != nil {
		t.Fatal(err)
	}
	ps, err := s.Pushes(id)
	if err != nil || len(ps) != 2 || ps[0].Runner != (types.Address{2}) {
		t.Fatalf("pushes %+v %v", ps, err)
	}
	if err := s.SetHeight(42); err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Job(id)
	rec.State, rec.DoneAt = StateDone, 10
	if err := s.PutJob(rec); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(11); err != nil || n != 1 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if ps, _ := s.Pushes(id); len(ps) != 0 {
		t.Fatalf("pushes survived pruning: %+v", ps)
	}
	if ps, _ := s.Pushes(types.Hash{1, 1}); len(ps) != 1 {
		t.Fatal("pruning removed another job's pushes")
	}
	s.Close()
	// Reopened, the height survives.
	s, err = OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h, _ := s.Height(); h != 42 {
		t.Fatalf("height %d after reopen", h)
	}
}
