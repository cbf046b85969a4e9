package keys

import (
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"
)

func NewCmdKeys(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Manage account keys (keystore v3 files under --home/keys)"}
	kdf := func() keystore.KDF {
		if f.LightKDF {
			return keystore.Light
		}
		return keystore.Standard
	}
	newCmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Generate a key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ks, err := f.Keys()
			if err != nil {
				return err
			}
			pass, err := f.Password("New password: ", true)
			if err != nil {
				return err
			}
			e, err := ks.New(args[0], pass, kdf())
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Created key %s\n  address %s\n  file    %s\n", e.Name, e.Address, e.Path)
			return nil
		},
	}
	newCmd.Flags().BoolVar(&f.LightKDF, "light-kdf", false, "weaker, faster scrypt parameters (tests and throwaway devnet keys only)")

	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ks, err := f.Keys()
			if err != nil {
				return err
			}
			es, err := ks.List()
			if err != nil {
				return err
			}
			if listJSON {
				if es == nil {
					es = []keystore.Entry{}
				}
				return cmdutil.PrintJSON(f.Out, es)
			}
			if len(es) == 0 {
				fmt.Fprintf(f.Out, "No keys in %s/keys. Create one with `cowboy keys new NAME`.\n", f.Home)
			}
			for _, e := range es {
				fmt.Fprintf(f.Out, "%-20s %s\n", e.Name, e.Address)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(list, &listJSON)

	var showJSON, showPub bool
	show := &cobra.Command{
		Use:   "show NAME [--pubkey]",
		Short: "Show a key's address (and, with --pubkey, its public key: needs the password)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ks, err := f.Keys()
			if err != nil {
				return err
			}
			e, err := ks.Get(args[0])
			if err != nil {
				return err
			}
			pub := ""
			if showPub {
				pass, err := f.Password(fmt.Sprintf("Password for key %s: ", args[0]), false)
				if err != nil {
					return err
				}
				k, err := ks.Unlock(args[0], pass)
				if err != nil {
					return err
				}
				pub = "0x" + hex.EncodeToString(crypto.CompressPubkey(&k.PublicKey))
			}
			if showJSON {
				return cmdutil.PrintJSON(f.Out, struct {
					keystore.Entry
					PubKey string `json:"pubkey,omitempty"`
				}{*e, pub})
			}
			if showPub {
				fmt.Fprintln(f.Out, pub)
				return nil
			}
			fmt.Fprintf(f.Out, "Name     %s\nAddress  %s\nFile     %s\n", e.Name, e.Address, e.Path)
			return nil
		},
	}
	cmdutil.JSONFlag(show, &showJSON)
	show.Flags().BoolVar(&showPub, "pubkey", false, "print only the compressed public key (hex), e.g. for `volume grant --to`")

	var keyFile string
	importCmd := &cobra.Command{
		Use:   "import NAME",
		Short: "Import a hex private key (from --key-file, or one line on standard input)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var hexKey string
			if keyFile != "" {
				b, err := os.ReadFile(keyFile)
				if err != nil {
					return err
				}
				hexKey = strings.TrimSpace(string(b))
			} else {
				line, err := f.ReadLine()
				if err != nil {
					return fmt.Errorf("read private key from standard input: %w", err)
				}
				hexKey = line
			}
			ks, err := f.Keys()
			if err != nil {
				return err
			}
			pass, err := f.Password("New password: ", true)
			if err != nil {
				return err
			}
			e, err := ks.ImportHex(args[0], hexKey, pass, kdf())
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Imported key %s\n  address %s\n", e.Name, e.Address)
			return nil
		},
	}
	importCmd.Flags().StringVar(&keyFile, "key-file", "", "file holding the hex private key")
	importCmd.Flags().BoolVar(&f.LightKDF, "light-kdf", false, "weaker, faster scrypt parameters (tests only)")

	export := &cobra.Command{
		Use:   "export NAME",
		Short: "Print a key's private key as hex (handle with care)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ks, err := f.Keys()
			if err != nil {
				return err
			}
			pass, err := f.Password(fmt.Sprintf("Password for key %s: ", args[0]), false)
			if err != nil {
				return err
			}
			h, err := ks.ExportHex(args[0], pass)
			if err != nil {
				return err
			}
			fmt.Fprintln(f.Out, h)
			return nil
		},
	}
	cmd.AddCommand(newCmd, list, show, importCmd, export)
	return cmd
}
