package onchain

import "time"

// minPace bounds how often a relay polls or heartbeats, however fast the
// chain's blocks are.
const minPace = 10 * time.Millisecond

// probePace is the pause before the second look at the chain, which
// tells its block time.
const probePace = 100 * time.Millisecond

// blockClock converts the chain's windows, counted in blocks, into wall
// time by watching the height advance. The Relay Registry's liveness
// window and a challenge's response window are block counts: at 1 s
// blocks they are a minute and seconds, at a test chain's 20 ms blocks
// about a second and 200 ms, shorter than a fixed heartbeat or poll
// interval.
type blockClock struct {
	height uint64
	at     time.Time
	per    time.Duration // estimated block interval; 0 until two heights are seen
}

// observe records that the chain was at height at time now.
func (c *blockClock) observe(height uint64, now time.Time) {
	switch {
	case c.at.IsZero() || height < c.height:
		c.height, c.at = height, now
	case height > c.height:
		per := now.Sub(c.at) / time.Duration(height-c.height)
		if c.per == 0 || per < c.per {
			c.per = per // a faster chain takes effect at once
		} else {
			c.per = (c.per + per) / 2
		}
		c.height, c.at = height, now
	}
}

// within returns the pause before the next action so that it happens at
// least `times` times in a window of `blocks` blocks: def, or less when
// the window is shorter.
func (c *blockClock) within(blocks, times uint64, def time.Duration) time.Duration {
	if c.per == 0 || blocks == 0 || times == 0 {
		return def
	}
	d := c.per * time.Duration(blocks) / time.Duration(times)
	return max(min(def, d), minPace)
}
