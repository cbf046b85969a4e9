package pvm

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pythonFS is the Python side: zygote, worker, validator, metering
// transformer, runtime, cowboy_sdk, pvm_host and deterministic math.
//
//go:embed all:python
var pythonFS embed.FS

// writePython writes the embedded Python sources into dir.
func writePython(dir string) error {
	return fs.WalkDir(pythonFS, "python", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, "python"), "/")
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return fs.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if !strings.HasSuffix(path, ".py") {
			return nil
		}
		b, err := pythonFS.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
}

// resolvePython finds the real CPython executable (not a pyenv shim) and
// checks that it is CPython 3.11.x.
func resolvePython(ctx context.Context, path string) (string, error) {
	if path == "" {
		path = "python3"
	}
	out, err := exec.CommandContext(ctx, path, "-S", "-c",
		"import sys,platform;print(sys.executable);print(platform.python_implementation());"+
			"print('%d.%d.%d'%sys.version_info[:3]);print(sys.maxsize>2**32)").Output()
	if err != nil {
		return "", fmt.Errorf("pvm: run interpreter %q: %w", path, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 {
		return "", fmt.Errorf("pvm: interpreter %q: unexpected probe output %q", path, out)
	}
	exe, impl, ver, is64 := lines[0], lines[1], lines[2], lines[3]
	if impl != "CPython" || !strings.HasPrefix(ver, "3.11.") || is64 != "True" {
		return "", fmt.Errorf("pvm: interpreter %q is %s %s (64-bit: %s); CPython 3.11.x 64-bit is required", path, impl, ver, is64)
	}
	if exe == "" {
		return "", fmt.Errorf("pvm: interpreter %q did not report sys.executable", path)
	}
	return exe, nil
}
