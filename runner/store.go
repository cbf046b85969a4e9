package runner

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/jobmachine"
	bolt "go.etcd.io/bbolt"
)

// JobState is a step of a job's life on this runner; the states and their
// transitions are the job machine's (runner/jobmachine).
type JobState = jobmachine.State

// Job states, in order (jobmachine's).
const (
	StateAssigned   = jobmachine.Assigned
	StateExecuting  = jobmachine.Executing
	StateExecuted   = jobmachine.Executed
	StateCommitting = jobmachine.Committing
	StateCommitted  = jobmachine.Committed
	StateAttesting  = jobmachine.Attesting
	StatePushed     = jobmachine.Pushed
	StateRevealing  = jobmachine.Revealing
	StateRevealed   = jobmachine.Revealed
	StateDone       = jobmachine.Done
	StateDeclined   = jobmachine.Declined
	StateFailed     = jobmachine.Failed
)

// JobRecord is this runner's durable view of one job assignment.
type JobRecord struct {
	ID         types.Hash      `json:"id"`
	Spec       types.Bytes     `json:"spec"` // canonical CBOR JobSpec
	Type       string          `json:"type"`
	Retry      uint32          `json:"retry"`
	Committee  []types.Address `json:"committee"`
	Aggregator types.Address   `json:"aggregator"`
	AssignedAt uint64          `json:"assigned_at"`
	Deadline   uint64          `json:"deadline"` // commit deadline of the assignment
	State      JobState        `json:"state"`

	Result     types.Bytes `json:"result,omitempty"`
	Embedding  []int32     `json:"embedding,omitempty"`
	Signature  types.Bytes `json:"signature,omitempty"`
	Commitment types.Hash  `json:"commitment"`
	Usage      job.Usage   `json:"usage"`
	ExecMs     int64       `json:"exec_ms"`
	// Report is the usage report signed into the result (v2 message);
	// a fault report stands for a run that could not produce a result.
	Report    *verify.Report `json:"report,omitempty"`
	ExecError string         `json:"exec_error,omitempty"`
	// Output is what this runner, as the job's aggregator, wrote to the
	// job's output volume (content hash, new root and version).
	Output *job.OutputCommitment `json:"output,omitempty"`

	// Tx is the signed transaction of the pending on-chain effect
	// (commit, reveal or submission), stored before it is sent so a restart
	// re-sends the identical transaction instead of building a second one.
	Tx     types.Bytes `json:"tx,omitempty"`
	TxHash types.Hash  `json:"tx_hash"`
	TxKind string      `json:"tx_kind,omitempty"` // commit, attest_result, submit, reveal
	// ResultAttested: our per-job TEE evidence (tee_attest_result) landed,
	// or was refused in a mode that does not need it; never sent twice.
	ResultAttested bool `json:"result_attested,omitempty"`
	// SelfRevealed: our individual reveal landed (or was refused because
	// the job had moved on); never sent twice.
	SelfRevealed bool `json:"self_revealed,omitempty"`

	Outcome   string    `json:"outcome,omitempty"` // chain status when done (verified, finalized, failed…)
	Error     string    `json:"error,omitempty"`
	DoneAt    uint64    `json:"done_at,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// DecodedSpec decodes the stored spec.
func (r *JobRecord) DecodedSpec() (*job.JobSpec, error) {
	s, err := job.DecodeJobSpec(r.Spec)
	if err != nil {
		return nil, fmt.Errorf("job %s: stored spec: %w", r.ID, err)
	}
	return s, nil
}

// Reveal is this runner's reveal of the job.
func (r *JobRecord) Reveal(self types.Address) verify.Reveal {
	rev := verify.Reveal{Runner: self, Result: slices.Clone(r.Result), Signature: slices.Clone(r.Signature), Embedding: slices.Clone(r.Embedding)}
	if r.Report != nil {
		rep := *r.Report
		rev.Report = &rep
	}
	return rev
}

var (
	bucketMeta   = []byte("meta")
	bucketJobs   = []byte("jobs")
	bucketPushes = []byte("pushes") // job id || runner → JSON verify.Reveal (aggregator role)
	keyHeight    = []byte("height")
)

// Store is the runner's bbolt database: the last processed chain height,
// every job record and the results pushed to this runner as aggregator.
type Store struct {
	db *bolt.DB
}

// OpenStore opens (creating) the database at path.
func OpenStore(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("runner store: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("runner store %s: %w (is another cowboy-runner using this data dir?)", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketJobs, bucketPushes} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("runner store: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Height returns the last fully processed chain height (0 if none).
func (s *Store) Height() (uint64, error) {
	var h uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keyHeight); len(v) == 8 {
			h = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return h, err
}

// SetHeight records h as processed.
func (s *Store) SetHeight(h uint64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyHeight, binary.BigEndian.AppendUint64(nil, h))
	})
}

// ErrNoJob is returned for an unknown job id.
var ErrNoJob = errors.New("no such job")

// Job returns a job record.
func (s *Store) Job(id types.Hash) (*JobRecord, error) {
	var r *JobRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketJobs).Get(id[:])
		if v == nil {
			return fmt.Errorf("%w: %s", ErrNoJob, id)
		}
		r = new(JobRecord)
		return json.Unmarshal(v, r)
	})
	return r, err
}

// ErrSuperseded refuses a write of an attempt older than the stored one
// (the job was re-selected).
var ErrSuperseded = errors.New("job attempt superseded by a re-selection")

// PutJob writes a job record (fsynced before it returns), unless the
// stored record is of a later attempt.
func (s *Store) PutJob(r *JobRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode job %s: %w", r.ID, err)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketJobs)
		if old := bk.Get(r.ID[:]); old != nil {
			var o struct {
				Retry uint32 `json:"retry"`
			}
			if json.Unmarshal(old, &o) == nil && o.Retry > r.Retry {
				return fmt.Errorf("job %s attempt %d: %w (stored attempt %d)", r.ID, r.Retry, ErrSuperseded, o.Retry)
			}
		}
		return bk.Put(r.ID[:], b)
	})
}

// Jobs returns every job record in id order.
func (s *Store) Jobs() ([]*JobRecord, error) {
	var out []*JobRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).ForEach(func(_, v []byte) error {
			r := new(JobRecord)
			if err := json.Unmarshal(v, r); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// PutPush stores a result pushed by a committee member.
func (s *Store) PutPush(id types.Hash, r *verify.Reveal) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPushes).Put(append(slices.Clone(id[:]), r.Runner[:]...), b)
	})
}

// Pushes returns the results pushed for a job, by runner address.
func (s *Store) Pushes(id types.Hash) ([]verify.Reveal, error) {
	var out []verify.Reveal
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketPushes).Cursor()
		for k, v := c.Seek(id[:]); k != nil && len(k) == 52 && [32]byte(k[:32]) == id; k, v = c.Next() {
			var r verify.Reveal
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// Prune deletes terminal job records (and their pushes) finished before
// height `before`.
func (s *Store) Prune(before uint64) (int, error) {
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		jobs, pushes := tx.Bucket(bucketJobs), tx.Bucket(bucketPushes)
		var ids [][]byte
		if err := jobs.ForEach(func(k, v []byte) error {
			var r JobRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if r.State.Terminal() && r.DoneAt != 0 && r.DoneAt < before {
				ids = append(ids, slices.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, id := range ids {
			if err := jobs.Delete(id); err != nil {
				return err
			}
			c := pushes.Cursor()
			var del [][]byte
			for k, _ := c.Seek(id); k != nil && len(k) == 52 && string(k[:32]) == string(id); k, _ = c.Next() {
				del = append(del, slices.Clone(k))
			}
			for _, k := range del {
				if err := pushes.Delete(k); err != nil {
					return err
				}
			}
			n++
		}
		return nil
	})
	return n, err
}

// OpenStoreReadOnly opens an existing database for reading (status
// tooling); it fails while a daemon holds it.
func OpenStoreReadOnly(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
	if err != nil {
		return nil, fmt.Errorf("runner store %s: %w", path, err)
	}
	return &Store{db: db}, nil
}
