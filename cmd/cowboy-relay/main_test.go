package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(IO{Out: &out, Err: &errb})
	root.SetArgs(args)
	err := root.Execute()
	return out.String() + errb.String(), err
}

func TestInitStatusVersion(t *testing.T) {
	home := filepath.Join(t.TempDir(), "relay")
	out, err := runCmd(t, "init", "--home", home, "--listen", "127.0.0.1:7499", "--capacity", "1000")
	if err != nil || !strings.Contains(out, "relay id") {
		t.Fatalf("init: %v %s", err, out)
	}
	if _, err := runCmd(t, "init", "--home", home); err == nil {
		t.Fatal("second init must refuse to overwrite the node key")
	}
	out, err = runCmd(t, "status", "--home", home, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status json: %v %s", err, out)
	}
	if st.Running || st.Addr != "127.0.0.1:7499" || st.Capacity != 1000 || !strings.HasPrefix(st.ID, "0x") {
		t.Fatalf("status %+v", st)
	}
	if _, err := runCmd(t, "run"); err == nil {
		t.Fatal("run without --home must fail")
	}
	var got *RunOptions
	cmd := newCmdRun(IO{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, func(o *RunOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--home", home, "--listen", "127.0.0.1:1", "--metrics", "127.0.0.1:2"})
	if err := cmd.Execute(); err != nil || got.Listen != "127.0.0.1:1" || got.Metrics != "127.0.0.1:2" {
		t.Fatalf("run flags: %v %+v", err, got)
	}
	out, err = runCmd(t, "version")
	if err != nil || !strings.Contains(out, "cbfs/1") {
		t.Fatalf("version: %v %s", err, out)
	}
}
