package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/spf13/cobra"
)

// NewCmdBlob is `cowboy blob`: content-addressed blobs in CBFS (spec 002
// §7), the off-chain half of cowboy_sdk.blobs.commit.
func NewCmdBlob(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "blob",
		Short: "Store and fetch content-addressed blobs (outputs over 64 KiB) in CBFS, verified by multihash",
	}
	cmd.AddCommand(newBlobPutCmd(f), newBlobGetCmd(f))
	return cmd
}

func newBlobPutCmd(f *Factory) *cobra.Command {
	var (
		o      volumeOpts
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "put VOLUME FILE",
		Short: "Store FILE as a blob under /.blobs/<multihash>; prints the reference an actor commits to",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			data, err := os.ReadFile(a[1])
			if err != nil {
				return err
			}
			v, done, err := openVolume(f, cmd.Context(), &o, a[0])
			if err != nil {
				return err
			}
			defer done()
			ref, err := v.PutBlob(cmd.Context(), data)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, ref)
			}
			fmt.Fprintf(f.Out, "multihash %s\nsize      %d\nvolume    %s\npath      %s\n", ref.Multihash.Hex(), ref.Size, ref.Volume, ref.Path)
			if ref.Size <= blob.InlineMax {
				fmt.Fprintf(f.ErrOut, "note: %d bytes fit inline (at most %d); a blob is needed only above that\n", ref.Size, blob.InlineMax)
			}
			return nil
		},
	}
	o.add(cmd)
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newBlobGetCmd(f *Factory) *cobra.Command {
	var (
		o          volumeOpts
		vol, path  string
		txHash     string
		index      int
		size       uint64
		showSource bool
	)
	cmd := &cobra.Command{
		Use:   "get (MULTIHASH --volume VOLUME | --tx HASH) OUT",
		Short: "Fetch a blob and verify it against its multihash (OUT - for standard output); a tampered blob is refused",
		Long: `Fetch a blob from CBFS and write it to OUT only if its content hashes to the
multihash (and has the committed size). With --tx, the reference comes from the
BlobCommitted event of that transaction (--index picks one of several);
otherwise give the multihash and --volume (and --path if it is not under
/.blobs). A blob whose content does not match is refused with an error naming
the code BlobMismatch, and OUT is not written.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, a []string) error {
			ctx := cmd.Context()
			var ref blob.Ref
			out := a[len(a)-1]
			switch {
			case txHash != "" && len(a) == 1:
				h, err := types.ParseHash(txHash)
				if err != nil {
					return fmt.Errorf("--tx: %w", err)
				}
				commits, err := f.Client().Blobs().Commits(ctx, h)
				if err != nil {
					return err
				}
				if index < 0 || index >= len(commits) {
					return fmt.Errorf("transaction %s committed %d blobs; --index %d is out of range", h, len(commits), index)
				}
				ref = commits[index].Ref
				if vol == "" {
					vol = ref.Volume.String()
				}
			case txHash == "" && len(a) == 2:
				m, err := blob.ParseHex(a[0])
				if err != nil {
					return err
				}
				ref = blob.Ref{Multihash: m, Size: size, Path: path}
				if vol == "" && o.token == "" {
					return errors.New("--volume is required with a multihash")
				}
			default:
				return errors.New("give MULTIHASH and OUT with --volume, or OUT with --tx")
			}
			if showSource {
				fmt.Fprintf(f.ErrOut, "blob %s (%d bytes) in volume %s at %s\n", ref.Multihash.Hex(), ref.Size, vol, ref.Path)
			}
			v, done, err := openVolume(f, ctx, &o, vol)
			if err != nil {
				return err
			}
			defer done()
			data, err := v.GetBlob(ctx, ref)
			if errors.Is(err, cbfs.ErrBlobMismatch) {
				return fmt.Errorf("BlobMismatch: %w", err)
			}
			if err != nil {
				return err
			}
			if out == "-" {
				_, err := f.Out.Write(data)
				return err
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".part-*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			if _, err := tmp.Write(data); err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			fmt.Fprintf(f.ErrOut, "verified %s: %d bytes match %s\n", out, len(data), ref.Multihash.Hex())
			return nil
		},
	}
	o.add(cmd)
	cmd.Flags().StringVar(&vol, "volume", "", "volume id or name (default with --tx: the committed volume)")
	cmd.Flags().StringVar(&path, "path", "", "path of the blob in the volume (default /.blobs/<multihash>)")
	cmd.Flags().Uint64Var(&size, "size", 0, "expected size in bytes (0: not checked)")
	cmd.Flags().StringVar(&txHash, "tx", "", "take the reference from this transaction's BlobCommitted event")
	cmd.Flags().IntVar(&index, "index", 0, "which of the transaction's BlobCommitted events")
	cmd.Flags().BoolVarP(&showSource, "verbose", "v", false, "print where the blob is read from")
	return cmd
}
