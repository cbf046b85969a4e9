package pvm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.PoolSize != 2 || c.Costs != DefaultCosts() || c.Limits != DefaultLimits() || c.Logger == nil {
		t.Fatalf("defaults not filled: %+v", c)
	}
	if c.Costs.Call != 10 || c.Costs.Arith != 1 || c.Costs.Subscript != 3 || c.Costs.StorageWrite != 200 ||
		c.Costs.SendMessage != 500 || c.Costs.EmitEventByte != 5 || c.Limits.MemoryBytes != 10<<20 ||
		c.Limits.TmpBytes != 256<<10 || c.Limits.RecursionDepth != 32 {
		t.Fatalf("spec values wrong: %+v", c)
	}
	c = Config{Limits: Limits{MemoryBytes: 1 << 20}}.withDefaults()
	if c.Limits.MemoryBytes != 1<<20 || c.Limits.TmpBytes != 256<<10 {
		t.Fatalf("partial limits: %+v", c.Limits)
	}
}

func TestRejectsOtherPython(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "python3")
	script := "#!/bin/sh\necho /usr/bin/python3.12\necho CPython\necho 3.12.1\necho True\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := New(context.Background(), Config{Python: fake})
	if err == nil || !strings.Contains(err.Error(), "CPython 3.11.x") {
		t.Fatalf("want version refusal, got %v", err)
	}
	_, err = New(context.Background(), Config{Python: filepath.Join(dir, "missing")})
	if err == nil {
		t.Fatal("missing interpreter accepted")
	}
}
