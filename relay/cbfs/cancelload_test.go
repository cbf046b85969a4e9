package cbfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestCancelledWritesUnderLoad reproduces the mount's "not enough healthy
// relays" EIO under tar/git load: many writers store files on six real
// relays while others abandon their writes and reads part-way (a program
// killed mid-write, a read-ahead the kernel no longer wants). A write whose
// caller did not give up must never fail. Before the fix each abandoned
// request closed the connection all requests to that relay share, the
// requests in flight on it failed, the relay was avoided for 15 s, and the
// next 4+2 upload, which needs all six relays, failed. COWBOY_SOAK=1 runs
// it longer.
func TestCancelledWritesUnderLoad(t *testing.T) {
	rounds := 6
	if os.Getenv("COWBOY_SOAK") != "" {
		rounds = 200
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	const seg = 64 << 10
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: seg})
	if err != nil {
		t.Fatal(err)
	}
	// Files to read back (and abandon reads of) while the writers run.
	src := rand.New(rand.NewPCG(3, 3))
	base := randBytes(src, 3*seg+100)
	if _, err := vol.Put(ctx, "/base", bytes.NewReader(base)); err != nil {
		t.Fatal(err)
	}

	const writers, abandoners = 4, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds+abandoners)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range rounds {
				data := randBytes(r, seg+r.IntN(2*seg))
				p := fmt.Sprintf("/w%d/f%d", w, i)
				if _, err := vol.Put(ctx, p, bytes.NewReader(data)); err != nil {
					errs <- fmt.Errorf("write %s: %w", p, err)
					continue
				}
				var got bytes.Buffer
				if _, err := vol.Get(ctx, p, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
					errs <- fmt.Errorf("read back %s: %v (%d of %d bytes)", p, err, got.Len(), len(data))
				}
			}
		}()
	}
	// Abandoners start writes and reads and give up on them part-way.
	stop := make(chan struct{})
	var abandoned sync.WaitGroup
	var gaveUp, finished int64
	var mu sync.Mutex
	for a := range abandoners {
		abandoned.Add(1)
		go func() {
			defer abandoned.Done()
			r := rand.New(rand.NewPCG(uint64(a), 2))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				actx, acancel := context.WithCancel(ctx)
				time.AfterFunc(time.Duration(r.IntN(20))*time.Millisecond, acancel)
				var err error
				if i%2 == 0 {
					_, err = vol.Put(actx, fmt.Sprintf("/a%d/f%d", a, i), bytes.NewReader(randBytes(r, 2*seg)))
				} else {
					_, err = vol.Get(actx, "/base", &bytes.Buffer{})
				}
				acancel()
				mu.Lock()
				if err != nil {
					gaveUp++
				} else {
					finished++
				}
				mu.Unlock()
				if err != nil && !errors.Is(err, context.Canceled) {
					errs <- fmt.Errorf("abandoned op %d: %w, want context.Canceled", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	abandoned.Wait()
	close(errs)
	n := 0
	for err := range errs {
		n++
		if n <= 5 {
			t.Error(err)
		}
	}
	if n > 5 {
		t.Errorf("... and %d more failures", n-5)
	}
	t.Logf("%d writes by %d writers; %d abandoned operations gave up, %d finished first", writers*rounds, writers, gaveUp, finished)
	if gaveUp == 0 {
		t.Fatal("no operation was abandoned part-way: the test did not exercise cancellation")
	}
}
