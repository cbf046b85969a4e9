package actor

import (
	"strings"
	"testing"
)

// timerSrc arms a timer (what manifestHints looks for).
const timerSrc = "from cowboy_sdk import actor, runtime\n\n@actor\nclass Clock:\n    def arm(self, n):\n        self.storage['t'] = runtime.set_interval(n, 'tick')\n"

func TestManifestHints(t *testing.T) {
	timers, err := deployManifest([]string{"timers"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if h := manifestHints([]byte(timerSrc), nil); len(h) != 1 || !strings.Contains(h[0], "--require timers") {
		t.Fatalf("no manifest: %v", h)
	}
	if h := manifestHints([]byte(timerSrc), timers); len(h) != 0 {
		t.Fatalf("declared: %v", h)
	}
	if h := manifestHints([]byte("x = runner.submit_job(spec, self.on, on_timeout=self.t)"), timers); len(h) != 1 || !strings.Contains(h[0], "jobs:TYPES") {
		t.Fatalf("jobs: %v", h)
	}
}
