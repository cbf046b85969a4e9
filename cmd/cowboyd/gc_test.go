package main

import (
	"math"
	"testing"
)

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{
		"2GiB": 2 << 30, "512MiB": 512 << 20, "512m": 512 << 20, "1G": 1 << 30, "64KB": 64 << 10,
		"1000": 1000, "off": math.MaxInt64, "": math.MaxInt64, "0": math.MaxInt64,
	} {
		got, err := parseMemoryLimit(in)
		if err != nil || got != want {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"-1", "GiB", "1.5GiB", "lots", "99999999999T"} {
		if _, err := parseMemoryLimit(bad); err == nil {
			t.Errorf("parseMemoryLimit(%q) accepted", bad)
		}
	}
}

func TestResolveGC(t *testing.T) {
	none := func(string) bool { return false }
	all := func(string) bool { return true }
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	// Defaults apply when neither the flag nor the environment says otherwise.
	s, err := resolveGC(defaultGCPercent, defaultMemoryLimit, none, env(nil))
	if err != nil || s.percent != defaultGCPercent || s.limit != 2<<30 {
		t.Fatalf("defaults: %+v, %v", s, err)
	}
	// GOGC / GOMEMLIMIT win over a default flag (the runtime applied them).
	s, err = resolveGC(defaultGCPercent, defaultMemoryLimit, none, env(map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}))
	if err != nil || s.percent >= -1 || s.limit >= 0 {
		t.Fatalf("environment: %+v, %v", s, err)
	}
	// An explicit flag wins over the environment.
	s, err = resolveGC(-1, "off", all, env(map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}))
	if err != nil || s.percent != -1 || s.limit != math.MaxInt64 {
		t.Fatalf("flags: %+v, %v", s, err)
	}
	if _, err := resolveGC(-5, "", all, env(nil)); err == nil {
		t.Fatal("--gc-percent -5 accepted")
	}
	if _, err := resolveGC(100, "lots", all, env(nil)); err == nil {
		t.Fatal("--memory-limit lots accepted")
	}
}
