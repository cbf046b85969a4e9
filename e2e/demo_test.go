package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDemoScript runs scripts/demo.sh — what `make demo` runs — against
// freshly built binaries, so the README's first command keeps working.
func TestDemoScript(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes about a minute")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	build := exec.Command("go", "build", "-o", filepath.Join(root, "bin")+"/", "./cmd/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "demo.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "COWBOY_PASSWORD=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Node stopped cleanly.",
		"Balance   250.5 CBY",
		"query get -> 6",
		`UnresolvedImport { name: "engine" }`,
		"score(3) -> 30",
		"matches the original",
		"Full redundancy restored",
		"TimerFired",
		"LOCAL STAND-IN",
		`verified {"price":97000.5}`,
		`verified {"sentiment":`,
		`verified {"conditions":"Light rain / drizzle"`,
		"Settled     success",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", out)
	}
}
