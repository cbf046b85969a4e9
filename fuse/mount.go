package fuse

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"
)

// Errors of Mount, to test with errors.Is.
var (
	// ErrUnavailable: the kernel FUSE device or the fusermount3 helper is missing.
	ErrUnavailable = errors.New("fuse: FUSE is unavailable")
	// ErrBusy: the mount point is already a mount point, or files are open.
	ErrBusy = errors.New("fuse: mount point busy")
	// ErrNotFlushed: changes made on the mount could not be committed
	// (unmount refused, or the serving process stopped with them kept in
	// its journal for the next mount).
	ErrNotFlushed = errors.New("fuse: pending changes not committed")
)

// Options configure a mount. The zero value is usable.
type Options struct {
	// ReadOnly mounts read-only. A volume opened with a token lacking write
	// permission is always mounted read-only.
	ReadOnly bool
	// CacheDir holds the encrypted read cache and write-back buffer (a fresh
	// subdirectory per mount, removed at unmount). Default os.TempDir().
	CacheDir string
	// CacheSize bounds the read cache in bytes (default 1 GiB). Unflushed
	// writes are never evicted and may exceed it.
	CacheSize int64
	// CacheKey encrypts the cache at rest (AES-256-GCM under a key derived
	// from it). The CLI derives it from the account key; zero means a
	// random key per mount.
	CacheKey [32]byte
	// PollInterval is how often the anchored manifest is checked for
	// changes by other writers (default 1s).
	PollInterval time.Duration
	// CommitDelay is how long namespace changes (mkdir, rename, unlink,
	// chmod...) wait to be batched before they are committed (default
	// 500ms). close(2) and fsync(2) of written files commit at once.
	CommitDelay time.Duration
	// DeferCloseCommit makes close(2) upload the file's data but leave the
	// manifest commit to the next batch (within CommitDelay) instead of
	// waiting for it. Writing many small files gets faster (several closes
	// share one commit to the relays); the price is close-to-open consistency with
	// other mounts, and a crash within CommitDelay of a close loses that
	// file. fsync(2) still commits at once.
	DeferCloseCommit bool
	// JournalDir keeps the changes that could not be committed when the
	// mount went away (a failed final flush); the next mount of the volume
	// commits them. Default: a directory per volume in CacheDir. Restoring
	// needs the same CacheKey (the CLI derives it from the account key).
	JournalDir string
	// AttrTimeout is how long the kernel caches attributes and names
	// (default 1s).
	AttrTimeout time.Duration
	// AllowOther lets other users access the mount (needs user_allow_other
	// in /etc/fuse.conf for unprivileged mounts).
	AllowOther bool
	Logger     *slog.Logger
	// Debug logs every FUSE request.
	Debug bool

	// verifyDirty checks every commit's dirty marks against a walk of the
	// whole namespace (tests; see export_test.go).
	verifyDirty bool
}

func (o Options) withDefaults() Options {
	if o.CacheDir == "" {
		o.CacheDir = os.TempDir()
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 1 << 30
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.CommitDelay <= 0 {
		o.CommitDelay = 500 * time.Millisecond
	}
	if o.AttrTimeout <= 0 {
		o.AttrTimeout = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Mounted is a mounted volume.
type Mounted struct {
	m      *mfs
	server *gofuse.Server
	dir    string
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}
	err    error // final flush error, set before done is closed
}

// Mount mounts vol on dir and serves it until it is unmounted (Unmount,
// `cowboy volume unmount`, fusermount3 -u or umount). As root it mounts
// directly; other users go through the setuid fusermount3 helper.
func Mount(ctx context.Context, vol *cbfs.Volume, dir string, opts Options) (*Mounted, error) {
	opts = opts.withDefaults()
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("fuse: mount point %s: %w", dir, err)
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	if err := checkMountPoint(dir); err != nil {
		return nil, err
	}
	if err := checkFUSE("/dev/fuse"); err != nil {
		return nil, err
	}
	man, err := vol.Manifest(ctx)
	if err != nil {
		return nil, fmt.Errorf("fuse: load manifest of %s: %w", vol.ID(), err)
	}
	if opts.CacheKey == ([32]byte{}) {
		rand.Read(opts.CacheKey[:])
	}
	seal, err := newSealer(opts.CacheKey)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("fuse: cache dir: %w", err)
	}
	cdir, err := os.MkdirTemp(opts.CacheDir, "cbfs-mount-*")
	if err != nil {
		return nil, fmt.Errorf("fuse: cache dir: %w", err)
	}
	cav := vol.Caveats()
	m := &mfs{vol: vol, opts: opts, log: opts.Logger.With("mount", dir), seal: seal, dir: cdir,
		ro: opts.ReadOnly || cav.Perms&captoken.PermWrite == 0 || cav.Prefix != ""}
	if opts.JournalDir == "" {
		m.opts.JournalDir = filepath.Join(opts.CacheDir, "cbfs-journal-"+vol.ID().String()[:24])
	}
	m.load(man)
	if restored, err := m.restoreJournal(); err != nil {
		os.RemoveAll(cdir)
		return nil, err
	} else if restored {
		if err := m.flushAll(ctx); err != nil {
			os.RemoveAll(cdir)
			return nil, fmt.Errorf("%w: the changes an earlier mount left in %s could not be committed (they stay there for the next try): %w",
				ErrNotFlushed, m.opts.JournalDir, err)
		}
		if err := m.dropJournal(); err != nil {
			m.log.Warn("journal committed but not removed", "err", err)
		}
		m.log.Warn("committed the changes an earlier mount could not", "journal", m.opts.JournalDir)
	}

	mo := gofuse.MountOptions{
		FsName:      "cbfs:" + vol.ID().String()[:16],
		Name:        "cbfs",
		DirectMount: os.Geteuid() == 0,
		AllowOther:  opts.AllowOther,
		MaxWrite:    1 << 20,
		// As much kernel read-ahead as FUSE allows (capped at MaxWrite);
		// the mount itself reads whole segments ahead.
		MaxReadAhead: 1 << 20,
		Debug:        opts.Debug,
		Options:      []string{"default_permissions"},
	}
	if m.ro {
		mo.Options = append(mo.Options, "ro")
	}
	neg := time.Duration(0)
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.bg = lctx // before serving: read-ahead uses it
	server, err := fs.Mount(dir, &node{m: m, n: m.root}, &fs.Options{
		MountOptions:    mo,
		EntryTimeout:    &opts.AttrTimeout,
		AttrTimeout:     &opts.AttrTimeout,
		NegativeTimeout: &neg,
		RootStableAttr:  &fs.StableAttr{Ino: m.root.ino, Mode: sIFDIR},
	})
	if err != nil {
		cancel()
		os.RemoveAll(cdir)
		return nil, fmt.Errorf("fuse: mount %s on %s: %w", vol.ID(), dir, err)
	}
	mt := &Mounted{m: m, server: server, dir: dir, cancel: cancel, done: make(chan struct{})}
	if err := mt.serveControl(); err != nil {
		m.log.Warn("no control socket: `cowboy volume unmount` cannot report the final flush", "err", err)
	}
	mt.wg.Add(2)
	go func() {
		defer mt.wg.Done()
		m.loop(lctx)
	}()
	go func() {
		defer mt.wg.Done()
		server.Wait()
		// Unmounted (by us or from outside): publish what is left.
		cancel()
		m.wg.Wait()
		fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer fcancel()
		mt.err = mt.flush(fctx)
		if mt.err != nil {
			m.log.Error("final flush failed", "err", mt.err)
		}
		os.RemoveAll(cdir)
		close(mt.done)
	}()
	m.log.Info("mounted", "volume", vol.ID().String(), "read_only", m.ro, "files", len(man.Files))
	return mt, nil
}

// loop commits batched namespace changes and merges other writers' ones.
func (m *mfs) loop(ctx context.Context) {
	tick := min(m.opts.CommitDelay, m.opts.PollInterval) / 2
	t := time.NewTicker(max(tick, 10*time.Millisecond))
	defer t.Stop()
	lastPoll := time.Now()
	var retryAt time.Time
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if p, age := m.pending(); p && age >= m.opts.CommitDelay && !m.ro && time.Now().After(retryAt) {
			if err := m.sync(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("background commit failed", "err", err, "retry_in", backoff)
				retryAt = time.Now().Add(backoff)
				backoff = min(2*backoff, 30*time.Second)
			} else {
				backoff = time.Second
			}
		}
		if time.Since(lastPoll) >= m.opts.PollInterval {
			lastPoll = time.Now()
			if err := m.refresh(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("refresh failed", "err", err)
			}
		}
	}
}

// Dir is the mount point.
func (mt *Mounted) Dir() string { return mt.dir }

// Sync uploads every dirty file and commits the manifest.
func (mt *Mounted) Sync(ctx context.Context) error { return mt.flush(ctx) }

// flush uploads and commits everything. If that fails, the pending changes
// are written to the journal (so that a process that dies next loses
// nothing) and the error wraps ErrNotFlushed.
func (mt *Mounted) flush(ctx context.Context) error {
	m := mt.m
	err := m.flushAll(ctx)
	if err == nil {
		if m.journaled.Load() {
			if err := m.dropJournal(); err != nil {
				m.log.Warn("stale journal not removed", "err", err)
			}
		}
		return nil
	}
	if m.ro {
		return err
	}
	n, jerr := m.persistJournal()
	if jerr != nil {
		return fmt.Errorf("%w: %w; and the journal could not be written: %w", ErrNotFlushed, err, jerr)
	}
	return fmt.Errorf("%w: %d changes kept in %s (the next mount of the volume commits them): %w", ErrNotFlushed, n, m.opts.JournalDir, err)
}

// Wait blocks until the volume is unmounted and everything written through
// it has been flushed (or the flush failed, which it returns).
func (mt *Mounted) Wait() error {
	<-mt.done
	mt.wg.Wait()
	return mt.err
}

// Unmount flushes every dirty byte, unmounts and waits for the final
// flush. It fails with ErrBusy while files are open on the mount (the
// volume stays mounted); UnmountLazy detaches it anyway.
func (mt *Mounted) Unmount(ctx context.Context) error {
	select {
	case <-mt.done:
		return mt.Wait()
	default:
	}
	if err := mt.flush(ctx); err != nil {
		return fmt.Errorf("fuse: unmount %s refused: %w", mt.dir, err)
	}
	if err := mt.server.Unmount(); err != nil {
		// go-fuse falls back to fusermount and reports its failure as the
		// program's text only, so the errno is lost; the kernel's mount
		// table says what the caller needs: the unmount was refused and the
		// volume is still mounted (files or working directories still use it).
		if still, merr := isMountPoint(mt.dir); errors.Is(err, syscall.EBUSY) || (merr == nil && still) {
			return fmt.Errorf("%w: unmount %s: %v", ErrBusy, mt.dir, err)
		}
		return fmt.Errorf("fuse: unmount %s: %w", mt.dir, err)
	}
	return mt.Wait()
}

// UnmountLazy detaches the mount even if files are open: the mount point
// disappears at once, open files keep working until closed, and Wait
// returns (after the final flush) when the last one is.
func (mt *Mounted) UnmountLazy(ctx context.Context) error {
	if err := mt.flush(ctx); err != nil {
		mt.m.log.Error("flush before lazy unmount", "err", err)
	}
	if err := unmountDir(mt.dir, true); err != nil {
		return err
	}
	return mt.Wait()
}

// Unmount unmounts the CBFS (or any FUSE) mount at dir, as `cowboy volume
// unmount` does. The process serving a CBFS mount is asked to commit every
// change first; if it cannot, the mount stays and the error wraps
// ErrNotFlushed. Other FUSE mounts are simply unmounted.
func Unmount(dir string, lazy bool) error {
	dir, err := cleanDir(dir)
	if err != nil {
		return err
	}
	ok, err := isMountPoint(dir)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("fuse: %s is not mounted", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := "unmount"
	if lazy {
		cmd = "unmount-lazy"
	}
	if served, err := askServer(ctx, dir, cmd); served {
		return err
	}
	return unmountDir(dir, lazy)
}

func unmountDir(dir string, lazy bool) error {
	if os.Geteuid() == 0 {
		flags := 0
		if lazy {
			flags = syscall.MNT_DETACH
		}
		if err := syscall.Unmount(dir, flags); err != nil {
			if errors.Is(err, syscall.EBUSY) {
				return fmt.Errorf("%w: unmount %s: files are open", ErrBusy, dir)
			}
			return fmt.Errorf("fuse: unmount %s: %w", dir, err)
		}
		return nil
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	out, err := exec.Command("fusermount3", append(args, dir)...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "busy") {
			return fmt.Errorf("%w: unmount %s: %s", ErrBusy, dir, msg)
		}
		return fmt.Errorf("fuse: fusermount3 -u %s: %v: %s", dir, err, msg)
	}
	return nil
}

func checkMountPoint(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("fuse: mount point %s does not exist", dir)
	}
	if err != nil {
		return fmt.Errorf("fuse: mount point %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("fuse: mount point %s is not a directory", dir)
	}
	mp, err := isMountPoint(dir)
	if err != nil {
		return err
	}
	if mp {
		return fmt.Errorf("%w: %s is already a mount point", ErrBusy, dir)
	}
	return nil
}

func checkFUSE(dev string) error {
	hint := "(load the fuse kernel module, or give the container the device)"
	if os.Geteuid() == 0 {
		f, err := os.OpenFile(dev, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("%w: %s: %v %s", ErrUnavailable, dev, err, hint)
		}
		f.Close()
	} else {
		// fusermount3 (setuid root) opens the device for us.
		if _, err := os.Stat(dev); err != nil {
			return fmt.Errorf("%w: %s: %v %s", ErrUnavailable, dev, err, hint)
		}
		if _, err := exec.LookPath("fusermount3"); err != nil {
			return fmt.Errorf("%w: fusermount3 not found (install the fuse3 package): %v", ErrUnavailable, err)
		}
	}
	return nil
}

// isMountPoint reports whether dir is a mount point per /proc/self/mountinfo.
func isMountPoint(dir string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, fmt.Errorf("fuse: read mount table: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescapeMount(fields[4]) == dir {
			return true, nil
		}
	}
	return false, sc.Err()
}

// unescapeMount decodes the octal escapes (\040 etc.) of mountinfo paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Serve blocks until ctx is done or the volume is unmounted from outside.
// When ctx is done (e.g. signal.NotifyContext on SIGINT/SIGTERM) it flushes
// every dirty byte and unmounts; if files are still open it detaches the
// mount lazily and waits for them to be closed. It returns the error of
// the final flush.
func (mt *Mounted) Serve(ctx context.Context) error {
	select {
	case <-mt.done:
		return mt.Wait()
	case <-ctx.Done():
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	err := mt.Unmount(fctx)
	if errors.Is(err, ErrBusy) {
		mt.m.log.Warn("files still open: detaching the mount; it goes away when they are closed")
		return mt.UnmountLazy(fctx)
	}
	if errors.Is(err, ErrNotFlushed) {
		// Asked to stop: the changes are in the journal; free the mount
		// point and report the failure.
		mt.m.log.Error("stopping with uncommitted changes", "err", err)
		if uerr := unmountDir(mt.dir, true); uerr != nil {
			mt.m.log.Error("detach the mount", "err", uerr)
		}
		mt.Wait()
		return err
	}
	return err
}
