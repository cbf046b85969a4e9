package volume

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"
)

// volumeOpts are the flags every volume command shares.
type volumeOpts struct {
	from  string
	token string
	k, m  int
}

func (o *volumeOpts) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.from, "from", "", "key name (default: the only key)")
	cmd.Flags().StringVar(&o.token, "token", "", "capability token (hex) granted to --from, to use someone else's volume")
}

// volumeAliases maps local names to volume ids (home/volumes.json).
type volumeAliases map[string]string

func aliasPath(f *Factory) string { return filepath.Join(f.Home, "volumes.json") }

func loadAliases(f *Factory) (volumeAliases, error) {
	b, err := os.ReadFile(aliasPath(f))
	if errors.Is(err, os.ErrNotExist) {
		return volumeAliases{}, nil
	}
	if err != nil {
		return nil, err
	}
	var a volumeAliases
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", aliasPath(f), err)
	}
	return a, nil
}

func saveAliases(f *Factory, a volumeAliases) error {
	b, _ := json.MarshalIndent(a, "", "  ")
	if err := os.MkdirAll(f.Home, 0o700); err != nil {
		return err
	}
	tmp := aliasPath(f) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, aliasPath(f))
}

func resolveVolume(f *Factory, s string) (cbfs.VolumeID, error) {
	if id, err := captoken.ParseVolumeID(strings.TrimPrefix(s, "0x")); err == nil {
		return id, nil
	}
	a, err := loadAliases(f)
	if err != nil {
		return cbfs.VolumeID{}, err
	}
	if id, ok := a[s]; ok {
		return captoken.ParseVolumeID(id)
	}
	return cbfs.VolumeID{}, fmt.Errorf("%q is neither a volume id nor a volume name in %s", s, aliasPath(f))
}

func cbfsClient(f *Factory, o *volumeOpts) (*cbfs.Client, *onchain.Anchor, error) {
	key, err := f.Signer(o.from)
	if err != nil {
		return nil, nil, err
	}
	return cbfsClientWithKey(f, o, key)
}

// cbfsClientWithKey builds a CBFS client that finds relays in the Relay
// Registry and anchors manifests at the Storage Manager, acting as key.
func cbfsClientWithKey(f *Factory, o *volumeOpts, key *ecdsa.PrivateKey) (*cbfs.Client, *onchain.Anchor, error) {
	anchor := &onchain.Anchor{Client: f.Client(), Key: key, K: o.k, M: o.m}
	c, err := cbfs.New(cbfs.Config{Key: key, Directory: onchain.Directory{Client: f.Client()}, Anchor: anchor})
	return c, anchor, err
}

// openVolume opens VOL as its owner, or through --token.
func openVolume(f *Factory, ctx context.Context, o *volumeOpts, vol string) (*cbfs.Volume, func(), error) {
	key, err := f.Signer(o.from)
	if err != nil {
		return nil, nil, err
	}
	return openVolumeWithKey(f, ctx, o, key, vol)
}

// openVolumeWithKey is openVolume for an already unlocked key (the mount
// needs the key itself too, to derive its cache key).
func openVolumeWithKey(f *Factory, ctx context.Context, o *volumeOpts, key *ecdsa.PrivateKey, vol string) (*cbfs.Volume, func(), error) {
	c, _, err := cbfsClientWithKey(f, o, key)
	if err != nil {
		return nil, nil, err
	}
	v, err := openWith(f, ctx, c, o, vol)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return v, func() {
		// Commits are durable on the relays already; anchor the owner's
		// last one now rather than leave it to the next session (only the
		// owner can anchor).
		if o.token == "" {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			if err := v.Checkpoint(cctx); err != nil {
				fmt.Fprintf(f.ErrOut, "warning: checkpoint not anchored (the changes are stored on the relays; run `cowboy volume sync`): %v\n", err)
			}
			cancel()
		}
		c.Close()
	}, nil
}

func openWith(f *Factory, ctx context.Context, c *cbfs.Client, o *volumeOpts, vol string) (*cbfs.Volume, error) {
	if o.token != "" {
		tok, err := captoken.ParseHex(strings.TrimSpace(o.token))
		if err != nil {
			return nil, fmt.Errorf("--token: %w", err)
		}
		return c.OpenShared(ctx, tok)
	}
	id, err := resolveVolume(f, vol)
	if err != nil {
		return nil, err
	}
	return c.OpenVolume(ctx, id)
}

func NewCmdVolume(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "volume", Short: "Store files in encrypted, erasure-coded CBFS volumes on relay nodes"}
	cmd.AddCommand(newVolumeCreateCmd(f), newVolumePutCmd(f), newVolumeGetCmd(f), newVolumeLsCmd(f), newVolumeRmCmd(f), newVolumeGrantCmd(f), newVolumeInfoCmd(f), newVolumeRepairCmd(f), newVolumeRevokeCmd(f), newVolumeFundCmd(f), newVolumeMountCmd(f), newVolumeUnmountCmd(f), newVolumeSyncCmd(f))
	return cmd
}

func newVolumeCreateCmd(f *Factory) *cobra.Command {
	var o volumeOpts
	cmd := &cobra.Command{
		Use:   "create NAME [--k 4 --m 2]",
		Short: "Create a volume (NAME is a local alias for its id)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			aliases, err := loadAliases(f)
			if err != nil {
				return err
			}
			if _, taken := aliases[a[0]]; taken {
				return fmt.Errorf("a volume named %q already exists (%s)", a[0], aliases[a[0]])
			}
			c, _, err := cbfsClient(f, &o)
			if err != nil {
				return err
			}
			defer c.Close()
			v, err := c.CreateVolume(cmd.Context(), cbfs.VolumeOptions{K: o.k, M: o.m})
			if err != nil {
				return err
			}
			id := v.ID()
			aliases[a[0]] = hex.EncodeToString(id[:])
			if err := saveAliases(f, aliases); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Volume %s created: %x (K=%d, M=%d)\n", a[0], id[:], orDefault(o.k, 4), orDefault(o.m, 2))
			return nil
		},
	}
	cmd.Flags().IntVar(&o.k, "k", 4, "data shards per segment")
	cmd.Flags().IntVar(&o.m, "m", 2, "parity shards per segment (survives the loss of M relays)")
	o.add(cmd)
	return cmd
}

// isDir reports whether a volume entry is a directory created through the
// FUSE mount (S_IFDIR in its recorded mode).
func isDir(fi cbfs.FileInfo) bool { return fi.Mode&0o170000 == 0o040000 }

// vpath makes a volume path absolute, as the volume layer requires.
func vpath(p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return p
	}
	return "/" + p
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// progress reports transfer progress on the error stream.
type progress struct {
	w      io.Writer
	label  string
	total  int64
	done   atomic.Int64
	stop   chan struct{}
	closed chan struct{}
}

func newProgress(w io.Writer, label string, total int64) *progress {
	p := &progress{w: w, label: label, total: total, stop: make(chan struct{}), closed: make(chan struct{})}
	go func() {
		defer close(p.closed)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.print(time.Since(start))
			}
		}
	}()
	return p
}

func (p *progress) print(elapsed time.Duration) {
	d := p.done.Load()
	rate := float64(d) / elapsed.Seconds()
	if p.total > 0 {
		fmt.Fprintf(p.w, "\r%s %5.1f%% %s / %s  %s/s   ", p.label, 100*float64(d)/float64(p.total), cmdutil.BytesText(uint64(d)), cmdutil.BytesText(uint64(p.total)), cmdutil.BytesText(uint64(rate)))
	} else {
		fmt.Fprintf(p.w, "\r%s %s  %s/s   ", p.label, cmdutil.BytesText(uint64(d)), cmdutil.BytesText(uint64(rate)))
	}
}

func (p *progress) finish() {
	close(p.stop)
	<-p.closed
	fmt.Fprint(p.w, "\r\033[K")
}

type countingReader struct {
	r io.Reader
	p *progress
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.done.Add(int64(n))
	return n, err
}

type countingWriter struct {
	w io.Writer
	p *progress
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.p.done.Add(int64(n))
	return n, err
}

func newVolumePutCmd(f *Factory) *cobra.Command {
	var o volumeOpts
	cmd := &cobra.Command{
		Use:   "put VOLUME LOCAL [REMOTE]",
		Short: "Upload a local file (REMOTE defaults to its base name)",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, a []string) error {
			remote := vpath(filepath.Base(a[1]))
			if len(a) == 3 {
				remote = vpath(a[2])
			}
			file, err := os.Open(a[1])
			if err != nil {
				return err
			}
			defer file.Close()
			st, err := file.Stat()
			if err != nil {
				return err
			}
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			p := newProgress(f.ErrOut, "put "+remote, st.Size())
			fi, err := v.Put(cmd.Context(), remote, countingReader{file, p})
			p.finish()
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Stored %s (%s in %d segments); manifest root %x\n", fi.Path, cmdutil.BytesText(uint64(fi.Size)), fi.Segments, rootOf(v))
			return nil
		},
	}
	o.add(cmd)
	return cmd
}

func rootOf(v *cbfs.Volume) []byte { r := v.Root(); return r[:] }

func newVolumeGetCmd(f *Factory) *cobra.Command {
	var o volumeOpts
	cmd := &cobra.Command{
		Use:   "get VOLUME REMOTE LOCAL",
		Short: "Download a file, verifying every shard (LOCAL - for standard output)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, a []string) error {
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			a[1] = vpath(a[1])
			if a[2] == "-" {
				_, err := v.Get(cmd.Context(), a[1], f.Out)
				return err
			}
			st, err := v.Stat(cmd.Context(), a[1])
			if err != nil {
				return err
			}
			if isDir(st) {
				return fmt.Errorf("%s is a directory", a[1])
			}
			// Write to a temporary file and rename: a failed download never
			// leaves a truncated file under the requested name.
			tmp, err := os.CreateTemp(filepath.Dir(a[2]), "."+filepath.Base(a[2])+".part-*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			p := newProgress(f.ErrOut, "get "+a[1], st.Size)
			_, err = v.Get(cmd.Context(), a[1], countingWriter{tmp, p})
			p.finish()
			if err == nil {
				err = tmp.Sync()
			}
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), a[2]); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Fetched %s -> %s (%s)\n", a[1], a[2], cmdutil.BytesText(uint64(st.Size)))
			return nil
		},
	}
	o.add(cmd)
	return cmd
}

func newVolumeLsCmd(f *Factory) *cobra.Command {
	var (
		o      volumeOpts
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "ls VOLUME [PREFIX]",
		Short: "List files",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, a []string) error {
			prefix := ""
			if len(a) == 2 {
				prefix = vpath(a[1])
			}
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			files, err := v.List(cmd.Context(), prefix)
			if err != nil {
				return err
			}
			sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
			if asJSON {
				if files == nil {
					files = []cbfs.FileInfo{}
				}
				return cmdutil.PrintJSON(f.Out, files)
			}
			for _, fi := range files {
				name := fi.Path
				switch {
				case isDir(fi):
					name += "/"
				case fi.Target != "":
					name += " -> " + fi.Target
				}
				fmt.Fprintf(f.Out, "%10s  %s  %s\n", cmdutil.BytesText(uint64(fi.Size)), fi.ModTime.UTC().Format(time.RFC3339), name)
			}
			return nil
		},
	}
	o.add(cmd)
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newVolumeRmCmd(f *Factory) *cobra.Command {
	var o volumeOpts
	cmd := &cobra.Command{
		Use:   "rm VOLUME PATH",
		Short: "Remove a file",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			if err := v.Remove(cmd.Context(), vpath(a[1])); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Removed %s\n", a[1])
			return nil
		},
	}
	o.add(cmd)
	return cmd
}

func newVolumeGrantCmd(f *Factory) *cobra.Command {
	var (
		o                 volumeOpts
		to, perms, prefix string
		expires           time.Duration
	)
	cmd := &cobra.Command{
		Use:   "grant VOLUME --to PUBKEY --perms r|rw [--prefix P] --expires DURATION",
		Short: "Issue a capability token (prints it; use it with --token)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if to == "" {
				return fmt.Errorf("--to PUBKEY is required (hex compressed or uncompressed secp256k1 public key)")
			}
			pb, err := hex.DecodeString(strings.TrimPrefix(to, "0x"))
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			grantee, err := crypto.DecompressPubkey(pb)
			if err != nil {
				if grantee, err = crypto.UnmarshalPubkey(pb); err != nil {
					return fmt.Errorf("--to is not a secp256k1 public key: %w", err)
				}
			}
			p, err := parsePerms(perms)
			if err != nil {
				return err
			}
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			tok, err := v.Grant(cmd.Context(), cbfs.GrantOptions{Grantee: grantee, Perms: p, Prefix: vpath(prefix), TTL: expires})
			if err != nil {
				return err
			}
			fmt.Fprintln(f.Out, tok.Hex())
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "grantee public key (hex; `cowboy keys show --pubkey` prints it)")
	cmd.Flags().StringVar(&perms, "perms", "r", "r, rw, or a combination of r,w,l,d (read, write, list, delete)")
	cmd.Flags().StringVar(&prefix, "prefix", "", "restrict to paths under this prefix")
	cmd.Flags().DurationVar(&expires, "expires", 24*time.Hour, "token lifetime")
	o.add(cmd)
	return cmd
}

// parsePerms accepts r, rw and the letter forms r/w/l/d.
func parsePerms(s string) (captoken.Perm, error) {
	switch s {
	case "r":
		return captoken.PermRead | captoken.PermList, nil
	case "rw":
		return captoken.PermRead | captoken.PermWrite | captoken.PermList | captoken.PermDelete, nil
	}
	p, err := captoken.ParsePerm(s)
	if err != nil {
		return 0, fmt.Errorf("--perms: %w", err)
	}
	return p, nil
}

func newVolumeInfoCmd(f *Factory) *cobra.Command {
	var (
		o      volumeOpts
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "info VOLUME",
		Short: "Show a volume's manifest root, commitment, shards, placement and relay health",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			info, err := v.Info(cmd.Context())
			if err != nil {
				return err
			}
			onChain, err := f.Client().Volumes().Get(cmd.Context(), types.Hash(info.ID))
			if err != nil {
				return err
			}
			relays, err := f.Client().Relays().List(cmd.Context())
			if err != nil {
				return err
			}
			m, err := v.Manifest(cmd.Context())
			if err != nil {
				return err
			}
			perRelay := map[types.Address]int{}
			for _, fe := range m.Files {
				for _, seg := range fe.Segments {
					for _, sh := range seg.Shards {
						perRelay[types.Address(sh.Relay)]++
					}
				}
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, map[string]any{"volume": info, "commitment": onChain, "shards_per_relay": perRelay, "relays": relays})
			}
			fmt.Fprintf(f.Out, "Volume        %x\n", info.ID[:])
			fmt.Fprintf(f.Out, "Owner         %s\n", types.Address(info.Owner))
			fmt.Fprintf(f.Out, "Erasure       K=%d data + M=%d parity, %s segments\n", info.K, info.M, cmdutil.BytesText(uint64(info.SegmentSize)))
			fmt.Fprintf(f.Out, "Manifest      version %d, root %x\n", info.Version, info.Root[:])
			fmt.Fprintf(f.Out, "On chain      version %d, root %s (Storage Manager %s)\n", onChain.Version, onChain.Root, types.StorageManagerAddress)
			fmt.Fprintf(f.Out, "Files         %d, %s plaintext, %s in shards\n", info.Files, cmdutil.BytesText(uint64(info.Bytes)), cmdutil.BytesText(uint64(info.StoredBytes)))
			fmt.Fprintln(f.Out, "Placement")
			health := map[types.Address]string{}
			for _, r := range relays {
				health[r.ID] = "healthy"
				if !r.Healthy {
					health[r.ID] = "UNHEALTHY"
				}
			}
			ids := make([]types.Address, 0, len(perRelay))
			for id := range perRelay {
				ids = append(ids, id)
			}
			sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
			chal := map[types.Address]string{}
			for _, p := range onChain.Placement {
				st := "no challenge yet"
				if c := p.Challenge; c != nil {
					st = fmt.Sprintf("epoch %d challenge %s", c.Epoch, c.Status)
				}
				chal[p.Relay] = st
			}
			for _, id := range ids {
				h := health[id]
				if h == "" {
					h = "NOT REGISTERED"
				}
				c := chal[id]
				if c == "" {
					c = "not in the on-chain placement"
				}
				fmt.Fprintf(f.Out, "  %s  %5d shards  %-9s  %s\n", id, perRelay[id], h, c)
			}
			if r := onChain.Rent; r != nil {
				fmt.Fprintln(f.Out, "Rent")
				fmt.Fprintf(f.Out, "  escrow      %s\n", cmdutil.Amount(r.Escrow))
				fmt.Fprintf(f.Out, "  per epoch   %s (%s of shards; epoch %d, %d blocks each)\n", cmdutil.Amount(r.RentPerEpoch), cmdutil.BytesText(r.ShardBytes), r.Epoch, r.EpochBlocks)
				fmt.Fprintf(f.Out, "  paid        %s to relays, funded %s\n", cmdutil.Amount(r.Paid), cmdutil.Amount(r.Funded))
				switch {
				case r.Evicted != 0:
					fmt.Fprintf(f.Out, "  EVICTED at block %d for unpaid rent; %s returned\n", r.Evicted, cmdutil.Amount(r.Refunded))
				case r.Arrears > 0:
					fmt.Fprintf(f.Out, "  IN ARREARS for %d of %d grace epochs: run `cowboy volume fund`\n", r.Arrears, r.GraceEpochs)
				}
			}
			return nil
		},
	}
	o.add(cmd)
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newVolumeRepairCmd(f *Factory) *cobra.Command {
	var (
		o      volumeOpts
		audit  bool
		rate   int64
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "repair VOLUME [--audit]",
		Short: "Rebuild shards held by unhealthy or unreachable relays (or failing challenges) onto healthy ones",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			rep, err := v.Repair(cmd.Context(), cbfs.RepairOptions{Audit: audit, MaxBytesPerSecond: rate})
			if asJSON {
				if jerr := cmdutil.PrintJSON(f.Out, rep); jerr != nil {
					return jerr
				}
			} else {
				fmt.Fprintf(f.Out, "Examined %d shards: %d bad, %d repaired, %d failed, %d skipped", rep.Shards, rep.Bad, rep.Repaired, rep.Failed, rep.Skipped)
				if rep.Version > 0 {
					fmt.Fprintf(f.Out, "; manifest version %d committed", rep.Version)
				}
				fmt.Fprintln(f.Out)
			}
			if err != nil {
				return err
			}
			if rep.Failed > 0 {
				return fmt.Errorf("%d shards could not be repaired", rep.Failed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&audit, "audit", false, "challenge every shard (random range + Merkle proof), not only those on unhealthy relays")
	cmd.Flags().Int64Var(&rate, "max-rate", 0, "limit rebuilt bytes per second (0 = unlimited)")
	o.add(cmd)
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newVolumeRevokeCmd(f *Factory) *cobra.Command {
	var o volumeOpts
	cmd := &cobra.Command{
		Use:   "revoke VOLUME TOKEN",
		Short: "Revoke a capability token (and everything delegated from it) on chain; relays honour it within seconds",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			id, err := resolveVolume(f, a[0])
			if err != nil {
				return err
			}
			tok, err := captoken.ParseHex(strings.TrimSpace(a[1]))
			if err != nil {
				return fmt.Errorf("token: %w", err)
			}
			c, anchor, err := cbfsClient(f, &o)
			if err != nil {
				return err
			}
			c.Close()
			tid := tok.ID()
			if err := anchor.RevokeToken(cmd.Context(), id, tid); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Revoked token %x of volume %x\n", tid[:], id[:])
			return nil
		},
	}
	o.add(cmd)
	return cmd
}

func newVolumeFundCmd(f *Factory) *cobra.Command {
	var o volumeOpts
	cmd := &cobra.Command{
		Use:   "fund VOLUME AMOUNT",
		Short: "Credit AMOUNT CBY to a volume's rent escrow at the Storage Manager (relays are paid from it each epoch)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			id, err := resolveVolume(f, a[0])
			if err != nil {
				return err
			}
			value, err := sdk.ParseCBY(a[1])
			if err != nil {
				return fmt.Errorf("amount: %w", err)
			}
			if value.Sign() <= 0 {
				return fmt.Errorf("amount must be positive")
			}
			c, anchor, err := cbfsClient(f, &o)
			if err != nil {
				return err
			}
			c.Close()
			if err := anchor.FundVolume(cmd.Context(), id, value); err != nil {
				return err
			}
			v, err := f.Client().Volumes().Get(cmd.Context(), types.Hash(id))
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Funded volume %x with %s", id[:], cmdutil.Amount(value.String()))
			if r := v.Rent; r != nil {
				fmt.Fprintf(f.Out, "; escrow %s, rent %s per epoch", cmdutil.Amount(r.Escrow), cmdutil.Amount(r.RentPerEpoch))
			}
			fmt.Fprintln(f.Out)
			return nil
		},
	}
	o.add(cmd)
	return cmd
}
