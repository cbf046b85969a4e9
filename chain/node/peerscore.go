package node

// Peer scoring for a full node's block sync: a peer that sends a forged
// proof, a broken or undecodable batch, an oversized frame, or stalls, is
// scored down and the next request goes to the best-scored peer. A good
// batch scores a peer up, to a cap, so that a peer's old faults fade.
// Nobody is banned outright: with every peer scored down, the node still
// asks the least bad one and keeps verifying what it gets.

const (
	penaltyProof   = 20 // a forged finality proof, or QCs by non-validators
	penaltyBroken  = 10 // blocks that do not extend the chain, undecodable replies
	penaltyFrame   = 10 // oversized or malformed frames (the transport reports them)
	penaltyStall   = 5  // no answer to a sync request in time
	scoreCap       = 10
	scoreUpOnBatch = 1
)

// peerScores is a full node's score per validator index. Only its loop
// goroutine uses it.
type peerScores struct {
	score map[int]int
	next  int // rotation among equal scores
}

func newPeerScores() *peerScores { return &peerScores{score: map[int]int{}} }

// pick returns the best-scored of peers 0..n-1 that usable allows (nil:
// all); among equals the first at or after the rotation point, which moves
// on each pick. It returns -1 when none is usable.
func (s *peerScores) pick(n int, usable func(int) bool) int {
	best := -1
	for k := range n {
		i := (s.next + k) % n
		if usable != nil && !usable(i) {
			continue
		}
		if best < 0 || s.score[i] > s.score[best] {
			best = i
		}
	}
	if best >= 0 {
		s.next = (best + 1) % n
	}
	return best
}

// pickAmong is pick over the peer indices cands (validators and full
// peers).
func (s *peerScores) pickAmong(cands []int) int {
	n := len(cands)
	best, at := -1, 0
	for k := range n {
		c := cands[(s.next+k)%n]
		if best < 0 || s.score[c] > s.score[best] {
			best, at = c, (s.next+k)%n
		}
	}
	if best >= 0 {
		s.next = (at + 1) % n
	}
	return best
}

// down lowers a peer's score and returns it.
func (s *peerScores) down(peer, by int) int {
	s.score[peer] -= by
	return s.score[peer]
}

// up raises a peer's score, to scoreCap.
func (s *peerScores) up(peer int) {
	s.score[peer] = min(s.score[peer]+scoreUpOnBatch, scoreCap)
}

// of returns a peer's score.
func (s *peerScores) of(peer int) int { return s.score[peer] }
