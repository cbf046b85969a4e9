package heal

import (
	"context"
	"sync"
	"time"
)

// Limiter is a token bucket over bytes: repair traffic of one relay stays
// within Rate bytes a second on average, with bursts of at most Burst
// bytes, so that one dead relay causes no repair storm.
type Limiter struct {
	mu     sync.Mutex
	rate   float64 // bytes per second; <= 0: unlimited
	burst  float64
	tokens float64
	last   time.Time
	now    func() time.Time
}

// NewLimiter returns a limiter of rate bytes/s (<= 0: unlimited) with a
// burst of one second's worth (at least 1 MiB, so that one shard passes).
func NewLimiter(rate int64, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	b := max(float64(rate), 1<<20)
	return &Limiter{rate: float64(rate), burst: b, tokens: b, last: now(), now: now}
}

// Reserve takes n bytes from the bucket and returns how long the caller
// must wait before sending them (0: now). Debt carries over, so the
// average rate holds for objects larger than the burst.
func (l *Limiter) Reserve(n int) time.Duration {
	if l == nil || l.rate <= 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens -= float64(n)
	if l.tokens >= 0 {
		return 0
	}
	return time.Duration(-l.tokens / l.rate * float64(time.Second))
}

// Wait blocks until n bytes may be sent, or ctx ends.
func (l *Limiter) Wait(ctx context.Context, n int) error {
	d := l.Reserve(n)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
