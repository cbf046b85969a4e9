package onchain

import (
	"testing"
	"time"
)

func TestBlockClock(t *testing.T) {
	var c blockClock
	t0 := time.Unix(1000, 0)
	if got := c.within(60, 3, 5*time.Second); got != 5*time.Second {
		t.Fatalf("no samples: %v, want the default", got)
	}
	c.observe(100, t0)
	c.observe(150, t0.Add(time.Second)) // 20 ms blocks
	if got := c.within(60, 3, 5*time.Second); got != 400*time.Millisecond {
		t.Fatalf("60 blocks of 20 ms, three times: %v, want 400ms", got)
	}
	if got := c.within(10, 3, 50*time.Millisecond); got != 50*time.Millisecond {
		t.Fatalf("a shorter default wins: %v", got)
	}
	if got := c.within(1, 100, time.Second); got != minPace {
		t.Fatalf("floor: %v, want %v", got, minPace)
	}
	c.observe(151, t0.Add(2*time.Second)) // slow block: averaged in
	if c.per <= 20*time.Millisecond || c.per >= time.Second {
		t.Fatalf("per after a slow block: %v", c.per)
	}
	c.observe(160, t0.Add(2*time.Second+90*time.Millisecond)) // fast again: at once
	if c.per != 10*time.Millisecond {
		t.Fatalf("per after fast blocks: %v, want 10ms", c.per)
	}
}
