package gethdev

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A geth that exits while starting is retried, then reported, without
// hanging on its exit (Close after an exit used to wait forever).
func TestStartExited(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "geth")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, fake, dir)
	if !errors.Is(err, errExited) || c != nil {
		t.Fatalf("Start of an exiting geth: %v, %v", c, err)
	}
	for i := range 3 {
		if _, err := os.Stat(filepath.Join(dir, string(rune('0'+i)), "geth.log")); err != nil {
			t.Errorf("attempt %d: %v", i, err)
		}
	}
}
