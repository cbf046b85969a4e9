package volume

import (
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"
)

type mountOpts struct {
	volumeOpts
	readOnly   bool
	cacheDir   string
	cacheSize  string
	poll       time.Duration
	allowOther bool
	debug      bool
	deferClose bool
}

func newVolumeMountCmd(f *Factory) *cobra.Command {
	var o mountOpts
	cmd := &cobra.Command{
		Use:   "mount VOLUME DIR [--token T] [--read-only] [--cache-dir D --cache-size N]",
		Short: "Mount a volume on DIR with FUSE; runs in the foreground until Ctrl-C, SIGTERM or `cowboy volume unmount DIR`",
		Long: `Mount a volume as a POSIX filesystem. Files closed or fsynced are committed
to the volume at once (durable on a majority of its relays; the on-chain
checkpoint follows within seconds); other changes within half a second. Other mounts of the
volume see changes within about 2 seconds. On Ctrl-C or SIGTERM every dirty
byte is flushed before the command exits (if files are still open, the mount is
detached and the command exits once they are closed). If the changes cannot be
committed (relays unreachable), ` + "`cowboy volume unmount`" + ` fails and the volume stays
mounted; a stopped mount process exits non-zero and keeps the changes in a
journal under the cowboy home, which the next mount of the volume commits.
Killing the process with SIGKILL loses data written but not yet closed or fsynced.

A --token without write permission mounts read-only.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			size, err := parseSize(o.cacheSize)
			if err != nil {
				return fmt.Errorf("--cache-size: %w", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			key, err := f.Signer(o.from)
			if err != nil {
				return err
			}
			v, closeClient, err := openVolumeWithKey(f, ctx, &o.volumeOpts, key, a[0])
			if err != nil {
				return err
			}
			defer closeClient()
			id := v.ID()
			cacheKey, err := hkdf.Key(sha256.New, crypto.FromECDSA(key), id[:], "cowboy fuse cache key v1", 32)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(f.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
			if o.debug {
				logger = slog.New(slog.NewTextHandler(f.ErrOut, &slog.HandlerOptions{Level: slog.LevelDebug}))
			}
			mt, err := fuse.Mount(ctx, v, a[1], fuse.Options{ReadOnly: o.readOnly, CacheDir: o.cacheDir, CacheSize: size,
				CacheKey: [32]byte(cacheKey), JournalDir: filepath.Join(f.Home, "cbfs-journal", id.String()), PollInterval: o.poll, AllowOther: o.allowOther, DeferCloseCommit: o.deferClose, Logger: logger})
			if err != nil {
				return err
			}
			mode := "read-write"
			if o.readOnly || v.Caveats().Perms&captoken.PermWrite == 0 {
				mode = "read-only"
			}
			fmt.Fprintf(f.Out, "Mounted %s on %s (%s). Press Ctrl-C or run `cowboy volume unmount %s` to unmount.\n", a[0], mt.Dir(), mode, mt.Dir())
			if err := mt.Serve(ctx); err != nil {
				return fmt.Errorf("unmount %s: %w", mt.Dir(), err)
			}
			fmt.Fprintf(f.Out, "Unmounted %s; all data flushed.\n", mt.Dir())
			return nil
		},
	}
	o.add(cmd)
	cmd.Flags().BoolVar(&o.readOnly, "read-only", false, "mount read-only (every write fails with EROFS)")
	cmd.Flags().StringVar(&o.cacheDir, "cache-dir", "", "directory for the encrypted read cache and write-back buffer (default: the system temp dir)")
	cmd.Flags().StringVar(&o.cacheSize, "cache-size", "1G", "read cache size in bytes (suffixes K, M, G)")
	cmd.Flags().DurationVar(&o.poll, "poll", time.Second, "how often to look for changes made by other writers")
	cmd.Flags().BoolVar(&o.allowOther, "allow-other", false, "let other users access the mount")
	cmd.Flags().BoolVar(&o.debug, "debug", false, "log commits and errors in detail")
	cmd.Flags().BoolVar(&o.deferClose, "defer-commit", false, "close(2) uploads but does not wait for the commit (faster small files; weaker consistency, see `go doc ./fuse`)")
	return cmd
}

func newVolumeUnmountCmd(f *Factory) *cobra.Command {
	var lazy bool
	cmd := &cobra.Command{
		Use:   "unmount DIR [--lazy]",
		Short: "Unmount a volume mounted with `cowboy volume mount`; its process flushes every dirty byte and exits",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := fuse.Unmount(a[0], lazy); err != nil {
				if errors.Is(err, fuse.ErrNotFlushed) {
					return fmt.Errorf("%w\nThe volume is still mounted; fix the cause and run `cowboy volume unmount` again (stopping the mount process keeps the changes in its journal for the next mount)", err)
				}
				return err
			}
			fmt.Fprintf(f.Out, "Unmounted %s; every change is committed.\n", a[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&lazy, "lazy", false, "detach even if files are open (the mount goes away when they are closed)")
	return cmd
}

func newVolumeSyncCmd(f *Factory) *cobra.Command {
	var o volumeOpts
	cmd := &cobra.Command{
		Use:   "sync VOLUME|DIR",
		Short: "Anchor the volume's latest commit on chain now (for a mount DIR: commit everything pending first)",
		Long: `Commits are durable once a majority of the volume's relays hold them; the
on-chain StorageCommitment (which challenges and rent follow) is a checkpoint
written a few seconds later. sync writes that checkpoint now. Given the
directory of a running mount, it first commits every change pending there.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if st, err := os.Stat(a[0]); err == nil && st.IsDir() {
				if err := fuse.SyncMount(cmd.Context(), a[0]); err != nil {
					return err
				}
				fmt.Fprintf(f.Out, "Synced %s: every change committed and anchored.\n", a[0])
				return nil
			}
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			if err := v.Checkpoint(cmd.Context()); err != nil {
				return err
			}
			info, err := v.Info(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Anchored version %d of %s, root %x\n", info.Version, a[0], info.Root[:])
			return nil
		},
	}
	o.add(cmd)
	return cmd
}

// parseSize parses a byte count with an optional K, M, G or T suffix.
func parseSize(s string) (int64, error) {
	s = strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
