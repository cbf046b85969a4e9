package tee

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/cli/runner"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

func NewCmdTEE(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "tee", Short: "TEE attestation (TEE Verifier 0x…05)"}
	cmd.AddCommand(newTEEStatusCmd(f), newTEEParamsCmd(f), newTEEAttestCmd(f))
	return cmd
}

func newTEEStatusCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status ADDRESS",
		Short: "Show a runner's attestation: measurement, expiry and whether it is in force",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			at, err := f.Client().TEE().Attestation(cmd.Context(), addr)
			if errors.Is(err, sdk.ErrNotFound) && !asJSON {
				fmt.Fprintf(f.Out, "Runner %s has never attested.\n", addr)
				return nil
			}
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, at)
			}
			state := "in force"
			if !at.Valid {
				state = "NOT in force (expired, superseded policy, changed result key or runner gone)"
			}
			fmt.Fprintf(f.Out, "Runner        %s\n", at.Runner)
			fmt.Fprintf(f.Out, "Attestation   %s, verified at %d, expires at %d (head %d)\n", state, at.VerifiedAt, at.ExpiresAt, at.Height)
			fmt.Fprintf(f.Out, "Backend       %s\n", at.Backend)
			fmt.Fprintf(f.Out, "Unique id     0x%x\n", []byte(at.UniqueID))
			fmt.Fprintf(f.Out, "Signer id     0x%x (product %d, security version %d)\n", []byte(at.SignerID), at.ProductID, at.SecurityVersion)
			fmt.Fprintf(f.Out, "Debug         %v, TCB %s\n", at.Debug, at.TCB)
			fmt.Fprintf(f.Out, "Result key    0x%x\n", []byte(at.ResultKey))
			fmt.Fprintf(f.Out, "Seal key      0x%x\n", []byte(at.SealKey))
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newTEEParamsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Show the chain's TEE policy and Secrets Manager limits",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := f.Client().TEE().Params(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, p)
			}
			fmt.Fprintf(f.Out, "Policy          %s\n", p.PolicyID)
			fmt.Fprintf(f.Out, "  unique id     %s\n", orAny(p.Policy.UniqueID))
			fmt.Fprintf(f.Out, "  signer id     %s (product %d, min security version %d)\n", orAny(p.Policy.SignerID), p.Policy.ProductID, p.Policy.MinSecurityVersion)
			fmt.Fprintf(f.Out, "  allow debug %v, outdated TCB %v, SIMULATION %v\n", p.Policy.AllowDebug, p.Policy.AllowOutdatedTCB, p.Policy.AllowSimulation)
			fmt.Fprintf(f.Out, "Attestation TTL %d blocks\n", p.AttestationTTL)
			fmt.Fprintf(f.Out, "Secrets         %d bytes max, %d grants per secret, %d per owner\n", p.MaxSecretBytes, p.MaxGrants, p.MaxSecrets)
			fmt.Fprintf(f.Out, "SGX on node     %v\n", p.SGXSupported)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func orAny(b []byte) string {
	if len(b) == 0 {
		return "any"
	}
	return fmt.Sprintf("0x%x", b)
}

// readHexKey reads a hex key file (32 bytes), creating it with fresh random
// bytes when create is set and the file does not exist.
func readHexKey(path string, create bool) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && create {
		b := make([]byte, 32)
		if _, err := io.ReadFull(rand.Reader, b); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
			return nil, err
		}
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(string(raw)), "0x"))
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("%s: want 32 hex-encoded bytes", path)
	}
	return b, nil
}

func newTEEAttestCmd(f *Factory) *cobra.Command {
	var (
		tf                        cmdutil.TxFlags
		resultFile, sealFile, sim string
	)
	cmd := &cobra.Command{
		Use:   "attest --simulation-key-file F --result-key-file F --seal-key-file F [--from KEY]",
		Short: "Attest the sending runner with the SIMULATION backend (devnets only)",
		Long: "Produces SIMULATION evidence binding the runner's address, its registered Ed25519 result key and\n" +
			"its X25519 seal key, and submits it to the TEE Verifier. Only a dev policy admits it; on SGX\n" +
			"hardware the runner daemon attests from inside its enclave instead (docs/TEE.md). Key files hold\n" +
			"32 hex bytes; the simulation and seal key files are created if missing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sim == "" || resultFile == "" || sealFile == "" {
				return fmt.Errorf("--simulation-key-file, --result-key-file and --seal-key-file are required")
			}
			rk, err := runner.ReadResultKey("", resultFile)
			if err != nil {
				return err
			}
			platform, err := readHexKey(sim, true)
			if err != nil {
				return err
			}
			sealSeed, err := readHexKey(sealFile, true)
			if err != nil {
				return err
			}
			seal, err := ecdh.X25519().NewPrivateKey(sealSeed)
			if err != nil {
				return err
			}
			a, err := attest.NewSimulation(ed25519.NewKeyFromSeed(platform), attest.SimOptions{})
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).TEE().SubmitAttestation(cmd.Context(), a, rk, seal.PublicKey().Bytes(), sdk.TxOptions{})
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sim, "simulation-key-file", "", "Ed25519 seed of the simulated platform (created if missing)")
	fl.StringVar(&resultFile, "result-key-file", "", "the runner's Ed25519 result key seed or private key (hex)")
	fl.StringVar(&sealFile, "seal-key-file", "", "the runner's X25519 seal private key (created if missing)")
	tf.Add(cmd)
	return cmd
}

func NewCmdSecret(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "secret", Short: "Secrets released only to attested runners (Secrets Manager 0x…04)"}
	cmd.AddCommand(newSecretPutCmd(f), newSecretGrantCmd(f), newSecretRevokeCmd(f), newSecretRmCmd(f), newSecretListCmd(f), newSecretShowCmd(f))
	return cmd
}

// policyFlags build an attest.Policy from flags or a JSON file.
type policyFlags struct {
	file, uniqueID, signerID       string
	productID, minSVN              uint64
	debug, outdated, allowSimulate bool
}

func (p *policyFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&p.file, "policy", "", "JSON policy file ({\"unique_id\":\"0x…\",\"signer_id\":\"0x…\",\"product_id\":1,…})")
	fl.StringVar(&p.uniqueID, "unique-id", "", "MRENCLAVE the reading enclave must have (0x-hex, 32 bytes)")
	fl.StringVar(&p.signerID, "signer-id", "", "MRSIGNER the reading enclave must have (0x-hex, 32 bytes)")
	fl.Uint64Var(&p.productID, "product-id", 0, "ISVPRODID required with --signer-id")
	fl.Uint64Var(&p.minSVN, "min-svn", 0, "minimum ISVSVN with --signer-id")
	fl.BoolVar(&p.debug, "allow-debug", false, "admit debug enclaves (their memory is readable by the host)")
	fl.BoolVar(&p.outdated, "allow-outdated-tcb", false, "admit platforms whose TCB needs updates")
	fl.BoolVar(&p.allowSimulate, "allow-simulation", false, "admit SIMULATION evidence (devnets only)")
}

func (p *policyFlags) policy() (attest.Policy, error) {
	var pol attest.Policy
	if p.file != "" {
		raw, err := os.ReadFile(p.file)
		if err != nil {
			return pol, err
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&pol); err != nil {
			return pol, fmt.Errorf("--policy %s: %w", p.file, err)
		}
	}
	for _, h := range []struct {
		name, val string
		dst       *types.Bytes
	}{{"unique-id", p.uniqueID, &pol.UniqueID}, {"signer-id", p.signerID, &pol.SignerID}} {
		if h.val == "" {
			continue
		}
		b, err := hex.DecodeString(strings.TrimPrefix(h.val, "0x"))
		if err != nil {
			return pol, fmt.Errorf("--%s: %w", h.name, err)
		}
		*h.dst = b
	}
	if p.productID != 0 {
		pol.ProductID = p.productID
	}
	if p.minSVN != 0 {
		pol.MinSecurityVersion = p.minSVN
	}
	pol.AllowDebug = pol.AllowDebug || p.debug
	pol.AllowOutdatedTCB = pol.AllowOutdatedTCB || p.outdated
	pol.AllowSimulation = pol.AllowSimulation || p.allowSimulate
	return pol, pol.Validate()
}

func newSecretPutCmd(f *Factory) *cobra.Command {
	var (
		tf          cmdutil.TxFlags
		pf          policyFlags
		file, value string
	)
	cmd := &cobra.Command{
		Use:   "put NAME (--file F | --value S | stdin) (--unique-id 0x… | --signer-id 0x… --product-id N [--min-svn N] | --policy FILE) [--from KEY]",
		Short: "Store (or replace) an encrypted secret; replacing drops its grants",
		Long: "The secret is encrypted on this machine under a fresh data key; the chain stores only the\n" +
			"ciphertext and the data key sealed to a key derived from your account key. Grant it to attested\n" +
			"runners with `cowboy secret grant`. The policy says which enclaves may ever receive it.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			pol, err := pf.policy()
			if err != nil {
				return err
			}
			var plain []byte
			switch {
			case file != "" && value != "":
				return fmt.Errorf("give --file or --value, not both")
			case file != "":
				if plain, err = os.ReadFile(file); err != nil {
					return err
				}
			case value != "":
				plain = []byte(value)
			default:
				if plain, err = io.ReadAll(io.LimitReader(f.In, 1<<20)); err != nil {
					return err
				}
			}
			if len(plain) == 0 {
				return fmt.Errorf("empty secret")
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Secrets().Put(cmd.Context(), a[0], pol, plain, sdk.TxOptions{})
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "read the secret from this file")
	cmd.Flags().StringVar(&value, "value", "", "the secret (visible in the process list; prefer --file or stdin)")
	pf.add(cmd)
	tf.Add(cmd)
	return cmd
}

// secretTxCmd is a secret command that sends one transaction built by send
// from the unlocked key and the arguments.
func secretTxCmd(f *Factory, use, short string, nargs int, send func(cmd *cobra.Command, c *sdk.Client, key *ecdsa.PrivateKey, a []string) (*types.Tx, error)) *cobra.Command {
	var tf cmdutil.TxFlags
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(nargs),
		RunE: func(cmd *cobra.Command, a []string) error {
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := send(cmd, f.Client(), key, a)
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	tf.Add(cmd)
	return cmd
}

func newSecretGrantCmd(f *Factory) *cobra.Command {
	return secretTxCmd(f, "grant NAME RUNNER [--from KEY]", "Release a secret to an attested runner (its enclave key must satisfy the secret's policy)", 2,
		func(cmd *cobra.Command, c *sdk.Client, key *ecdsa.PrivateKey, a []string) (*types.Tx, error) {
			runner, err := f.ResolveAddress(a[1])
			if err != nil {
				return nil, err
			}
			return c.Account(key).Secrets().GrantTo(cmd.Context(), a[0], runner, sdk.TxOptions{})
		})
}

func newSecretRevokeCmd(f *Factory) *cobra.Command {
	return secretTxCmd(f, "revoke NAME RUNNER [--from KEY]", "Remove a runner's grant (what it already read stays read: rotate with `secret put`)", 2,
		func(cmd *cobra.Command, c *sdk.Client, key *ecdsa.PrivateKey, a []string) (*types.Tx, error) {
			runner, err := f.ResolveAddress(a[1])
			if err != nil {
				return nil, err
			}
			return c.Account(key).Secrets().Revoke(cmd.Context(), a[0], runner, sdk.TxOptions{})
		})
}

func newSecretRmCmd(f *Factory) *cobra.Command {
	return secretTxCmd(f, "rm NAME [--from KEY]", "Delete a secret and all its grants", 1,
		func(cmd *cobra.Command, c *sdk.Client, key *ecdsa.PrivateKey, a []string) (*types.Tx, error) {
			return c.Account(key).Secrets().Delete(cmd.Context(), a[0], sdk.TxOptions{})
		})
}

func newSecretListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [OWNER]",
		Short: "List an owner's secrets (default: the only key) with their versions and grants",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			arg := ""
			if len(a) == 1 {
				arg = a[0]
			}
			owner, err := f.AddressOrOnlyKey(arg)
			if err != nil {
				return err
			}
			ss, err := f.Client().Secrets().List(cmd.Context(), owner)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, ss)
			}
			if len(ss) == 0 {
				fmt.Fprintf(f.Out, "%s has no secrets.\n", owner)
			}
			for _, s := range ss {
				pol := "unique id " + orAny(s.Policy.UniqueID)
				if len(s.Policy.SignerID) > 0 {
					pol = fmt.Sprintf("signer %s product %d svn ≥ %d", orAny(s.Policy.SignerID), s.Policy.ProductID, s.Policy.MinSecurityVersion)
				}
				if s.Policy.AllowSimulation {
					pol += ", SIMULATION allowed"
				}
				fmt.Fprintf(f.Out, "%-24s v%d  %d grants  updated at %d  %s\n", s.Name, s.Version, s.Grants, s.UpdatedAt, pol)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newSecretShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show [OWNER] NAME",
		Short: "Show a secret's version, policy and the runners it is granted to (never the plaintext)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, a []string) error {
			ownerArg, name := "", a[len(a)-1]
			if len(a) == 2 {
				ownerArg = a[0]
			}
			owner, err := f.AddressOrOnlyKey(ownerArg)
			if err != nil {
				return err
			}
			s, err := f.Client().Secrets().Get(cmd.Context(), owner, name)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, s)
			}
			fmt.Fprintf(f.Out, "Secret      %s/%s version %d (%d bytes of ciphertext)\n", s.Owner, s.Name, s.Version, len(s.Ciphertext))
			fmt.Fprintf(f.Out, "Policy      %s: unique id %s, signer id %s product %d svn >= %d\n", s.PolicyID, orAny(s.Policy.UniqueID),
				orAny(s.Policy.SignerID), s.Policy.ProductID, s.Policy.MinSecurityVersion)
			fmt.Fprintf(f.Out, "            debug %v, outdated TCB %v, SIMULATION %v\n", s.Policy.AllowDebug, s.Policy.AllowOutdatedTCB, s.Policy.AllowSimulation)
			fmt.Fprintf(f.Out, "Updated     block %d (created %d)\n", s.UpdatedAt, s.CreatedAt)
			if len(s.GrantList) == 0 {
				fmt.Fprintln(f.Out, "Grants      none")
			}
			for _, g := range s.GrantList {
				fmt.Fprintf(f.Out, "Grant       %s  enclave 0x%x  seal key 0x%x  at block %d\n", g.Runner, []byte(g.UniqueID), []byte(g.SealKey), g.GrantedAt)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
