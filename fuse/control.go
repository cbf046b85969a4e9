package fuse

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The serving process of a mount listens on a unix socket named after the
// mount point (ControlPath), so that `cowboy volume unmount` and `cowboy
// volume sync`, run from another process, learn whether every change was
// committed instead of only detaching the mount. One request per
// connection: a command line ("unmount", "unmount-lazy" or "sync"), then
// one JSON reply line.

type controlReply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Code names the sentinel of a failure: "busy" (ErrBusy),
	// "not-flushed" (ErrNotFlushed).
	Code string `json:"code,omitempty"`
}

// ControlPath is the control socket of the mount at dir (an absolute,
// symlink-free path), in $XDG_RUNTIME_DIR or a private directory under
// the system temp dir.
func ControlPath(dir string) string {
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base == "" {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("cbfs-%d", os.Getuid()))
	}
	h := sha256.Sum256([]byte(dir))
	return filepath.Join(base, "cbfs-"+hex.EncodeToString(h[:8])+".sock")
}

// serveControl listens on the mount's control socket until the mount is
// done.
func (mt *Mounted) serveControl() error {
	path := ControlPath(mt.dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("fuse: control socket dir: %w", err)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%w: another process serves %s", ErrBusy, mt.dir)
	}
	os.Remove(path) // left by a killed process
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("fuse: control socket: %w", err)
	}
	os.Chmod(path, 0o600)
	go func() {
		<-mt.done
		l.Close()
		os.Remove(path)
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go mt.control(c)
		}
	}()
	return nil
}

func (mt *Mounted) control(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	switch strings.TrimSpace(line) {
	case "unmount":
		err = mt.Unmount(ctx)
	case "unmount-lazy":
		if err = mt.flush(ctx); err == nil {
			err = unmountDir(mt.dir, true)
		}
	case "sync":
		if err = mt.Sync(ctx); err == nil {
			err = mt.m.vol.Checkpoint(ctx)
		}
	default:
		err = fmt.Errorf("fuse: unknown control command %q", strings.TrimSpace(line))
	}
	r := controlReply{OK: err == nil}
	if err != nil {
		r.Error = err.Error()
		switch {
		case errors.Is(err, ErrBusy):
			r.Code = "busy"
		case errors.Is(err, ErrNotFlushed):
			r.Code = "not-flushed"
		}
	}
	b, _ := json.Marshal(r)
	c.Write(append(b, '\n'))
}

// askServer sends a control command to the process serving dir. ok is
// false when no process answers (a mount from an older version, or not a
// CBFS mount).
func askServer(ctx context.Context, dir, cmd string) (bool, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", ControlPath(dir))
	if err != nil {
		return false, nil
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte(cmd + "\n")); err != nil {
		return true, fmt.Errorf("fuse: control %s: %w", dir, err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return true, fmt.Errorf("fuse: no reply from the process serving %s (did it die?): %w", dir, err)
	}
	var r controlReply
	if err := json.Unmarshal(line, &r); err != nil {
		return true, fmt.Errorf("fuse: bad control reply: %w", err)
	}
	if r.OK {
		return true, nil
	}
	switch r.Code {
	case "busy":
		return true, fmt.Errorf("%w: %s", ErrBusy, r.Error)
	case "not-flushed":
		return true, fmt.Errorf("%w: %s", ErrNotFlushed, r.Error)
	}
	return true, errors.New(r.Error)
}

// SyncMount asks the process serving the mount at dir to commit every
// change and anchor a checkpoint now (`cowboy volume sync DIR`).
func SyncMount(ctx context.Context, dir string) error {
	dir, err := cleanDir(dir)
	if err != nil {
		return err
	}
	ok, err := askServer(ctx, dir, "sync")
	if !ok && err == nil {
		return fmt.Errorf("fuse: no CBFS mount process serves %s", dir)
	}
	return err
}

func cleanDir(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return dir, nil
}
