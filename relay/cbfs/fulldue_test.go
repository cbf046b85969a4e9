package cbfs

import "testing"

// TestFullDue: a manifest of many entries still gets a full version every
// fullEvery commits (a reader replays at most that many change sets over
// its entry list), but one of few entries is not rewritten every fullEvery
// commits: its readers' replay stays within replayEntries entry copies, and
// every chain stays within maxSinceFull (one log request). Before, every
// 256th commit was full whatever the manifest's size.
func TestFullDue(t *testing.T) {
	for _, files := range []int{0, 10, 1000, 5000, 8191, 8192, 100_000, 1_000_000} {
		k := 1
		for !fullDue(k, files) {
			k++
		}
		replay := k * max(files, 1)
		t.Logf("%d entries: full after %d change sets (%d entry copies to replay)", files, k, replay)
		if k > maxSinceFull || k < fullEvery {
			t.Fatalf("%d entries: full after %d change sets, want %d..%d", files, k, fullEvery, maxSinceFull)
		}
		if replay > max(replayEntries, fullEvery*files)+files {
			t.Fatalf("%d entries: a reader replays %d entry copies, over the bound", files, replay)
		}
		if files < replayEntries/fullEvery && k == fullEvery {
			t.Fatalf("%d entries: full every %d commits although replaying more is cheap", files, k)
		}
		if files >= replayEntries/fullEvery && k != fullEvery {
			t.Fatalf("%d entries: full after %d change sets, want every %d", files, k, fullEvery)
		}
	}
}
