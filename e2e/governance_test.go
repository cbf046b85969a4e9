package e2e

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// cliFails runs the cowboy CLI expecting it to fail and returns its output.
func cliFails(t *testing.T, d *daemon, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "cowboy"), append([]string{"--node", d.url(), "--home", home}, args...)...)
	cmd.Env = append(cmd.Environ(), "COWBOY_PASSWORD=e2e")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("cowboy %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}

func cliJSON(t *testing.T, d *daemon, home string, out any, args ...string) {
	t.Helper()
	s := cli(t, d, home, append(args, "--json")...)
	if err := json.Unmarshal([]byte(s), out); err != nil {
		t.Fatalf("cowboy %s: %v\n%s", strings.Join(args, " "), err, s)
	}
}

// waitProposal polls `cowboy gov show ID` until the proposal reaches
// status or ctx ends.
func waitProposal(ctx context.Context, t *testing.T, d *daemon, home, id, status string) apitypes.GovProposal {
	t.Helper()
	var p apitypes.GovProposal
	for {
		cliJSON(t, d, home, &p, "gov", "show", id)
		if p.Status == status {
			return p
		}
		if p.Status == "rejected" || p.Status == "failed" {
			t.Fatalf("proposal %s is %s, want %s: %+v", id, p.Status, status, p)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("proposal %s still %s, want %s: %+v", id, p.Status, status, p)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// councilGenesis writes nine Council keys c0…c8.hex into dir and rewrites
// each genesis file identically: those nine are the Council, and tier's
// timelock is long enough to act in before the proposal executes.
func councilGenesis(t *testing.T, dir string, tier int, gpaths ...string) {
	t.Helper()
	var members []string
	for i := 0; i < 9; i++ {
		k, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("c%d.hex", i))
		if err := os.WriteFile(f, []byte(hex.EncodeToString(crypto.FromECDSA(k))), 0o600); err != nil {
			t.Fatal(err)
		}
		members = append(members, types.PubkeyToAddress(k.PublicKey).String())
	}
	raw, err := os.ReadFile(gpaths[0])
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]json.RawMessage
	var gv map[string]uint64
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(g["governance"], &gv); err != nil {
		t.Fatal(err)
	}
	gv[fmt.Sprintf("gov.tier%d.timelock_blocks", tier)] = 100000
	g["governance"], _ = json.Marshal(gv)
	g["council"], _ = json.Marshal(members)
	if raw, err = json.Marshal(g); err != nil {
		t.Fatal(err)
	}
	for _, p := range gpaths {
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// councilSigs has Council members c0…c(n-1), imported in home, sign action
// on target offline and returns the --sig arguments.
func councilSigs(t *testing.T, d *daemon, home, chainID, action, target string, n int) []string {
	t.Helper()
	var args []string
	for i := 0; i < n; i++ {
		s := strings.TrimSpace(cli(t, d, home, "council", "sign", action, target, "--nonce", "0", "--chain-id", chainID, "--from", fmt.Sprintf("c%d", i)))
		args = append(args, "--sig", s)
	}
	return args
}

var proposalID = regexp.MustCompile(`Proposal (\d+) `)

// A parameter change and a treasury disbursement on cowboyd --dev, from
// the CLI: the dev validator proposes and votes; each proposal passes,
// waits for its timelock and executes. The changed parameter is then in
// force: the old minimum deposit is refused.
func TestGovernanceDevnet(t *testing.T) {
	home := t.TempDir()
	cliHome := t.TempDir()
	d := startNode(t, filepath.Join(home, "node"), freePort(t), 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli(t, d, cliHome, "keys", "import", "val", "--key-file", filepath.Join(home, "node", "validator.key"), "--light-kdf")

	var ps apitypes.Params
	cliJSON(t, d, cliHome, &ps, "params", "gov.min_deposit_cby")
	if len(ps.Params) != 1 || ps.Params[0].Value != 1 || ps.Params[0].Source != "genesis" {
		t.Fatalf("params %+v", ps)
	}

	// Tier 4: governance's own rules are meta-governance.
	out := cliFails(t, d, cliHome, "gov", "propose", "--tier", "0", "--param", "gov.min_deposit_cby=50", "--title", "too low", "--from", "val")
	if !strings.Contains(out, "TierTooLow") {
		t.Fatalf("tier 0 change of a tier 4 parameter: %s", out)
	}
	out = cli(t, d, cliHome, "gov", "propose", "--tier", "4", "--param", "gov.min_deposit_cby=50", "--param", "runners.heartbeat_timeout_blocks=90",
		"--title", "raise the deposit", "--from", "val")
	m := proposalID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("propose: %s", out)
	}
	cli(t, d, cliHome, "gov", "vote", m[1], "yes", "--from", "val")
	p := waitProposal(ctx, t, d, cliHome, m[1], "executed")
	if p.Validators.Yes != "1" || !p.QuorumReached || p.ETA == 0 {
		t.Fatalf("proposal %+v", p)
	}
	cliJSON(t, d, cliHome, &ps, "gov", "params", "gov.min_deposit_cby")
	if ps.Params[0].Value != 50 || ps.Params[0].Source != "governance" {
		t.Fatalf("after execution: %+v", ps.Params[0])
	}
	// The off-chain parameters runners poll serve the governed heartbeat timeout.
	op, err := d.client().Jobs().Params(ctx)
	if err != nil || op.HeartbeatTimeoutBlocks != 90 {
		t.Fatalf("offchain params %+v: %v", op, err)
	}
	// The Governance actor consumes the new value.
	out = cliFails(t, d, cliHome, "gov", "propose", "--tier", "2", "--disburse", "0xb0b0000000000000000000000000000000000000:10",
		"--title", "old deposit", "--deposit", "1", "--from", "val")
	if !strings.Contains(out, "DepositTooLow") {
		t.Fatalf("old deposit: %s", out)
	}

	// A Tier 2 disbursement, with the (new) default deposit.
	bob := types.Address{0xb0, 0xb0}
	out = cli(t, d, cliHome, "gov", "propose", "--tier", "2", "--disburse", bob.String()+":10", "--title", "pay bob", "--from", "val")
	m = proposalID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("propose: %s", out)
	}
	cli(t, d, cliHome, "gov", "vote", m[1], "yes", "--from", "val")
	waitProposal(ctx, t, d, cliHome, m[1], "executed")
	var tr apitypes.Treasury
	cliJSON(t, d, cliHome, &tr, "treasury", "show")
	ten, _ := sdk.ParseCBY("10")
	if tr.Disbursed != ten.String() || tr.Disbursements != 1 {
		t.Fatalf("treasury %+v", tr)
	}
	checkBalance(t, d.client(), bob, ten)
	var list apitypes.GovProposals
	cliJSON(t, d, cliHome, &list, "gov", "list")
	if len(list.Proposals) != 2 {
		t.Fatalf("list %+v", list)
	}

	// A Tier 3 upgrade of the Runner Registry to its shipped v2, activating
	// at a block after the vote; its rollback slot is kept until the deadline.
	reg := types.RunnerRegistryAddress.String()
	cliJSON(t, d, cliHome, &list, "gov", "list")
	out = cliFails(t, d, cliHome, "gov", "propose", "--tier", "3", "--upgrade", fmt.Sprintf("%s:v9@%d", reg, list.Height+10), "--title", "no such version", "--from", "val")
	if !strings.Contains(out, "UnknownVersion") {
		t.Fatalf("unregistered version: %s", out)
	}
	at, deadline := list.Height+30, list.Height+100000
	out = cli(t, d, cliHome, "gov", "propose", "--tier", "3", "--upgrade", fmt.Sprintf("%s:v2@%d:%d", reg, at, deadline), "--title", "runners v2", "--from", "val")
	if m = proposalID.FindStringSubmatch(out); m == nil {
		t.Fatalf("propose: %s", out)
	}
	cli(t, d, cliHome, "gov", "vote", m[1], "yes", "--from", "val")
	waitProposal(ctx, t, d, cliHome, m[1], "executed")
	for {
		var c apitypes.GovCouncil
		cliJSON(t, d, cliHome, &c, "council", "show")
		if len(c.Upgrades) == 1 && c.Upgrades[0].Version == "v2" {
			if c.Upgrades[0].Actor != types.RunnerRegistryAddress || c.Upgrades[0].Rollback != "v1" || c.Upgrades[0].RollbackDeadline != deadline || c.Height < at {
				t.Fatalf("upgrade record %+v at %d", c.Upgrades[0], c.Height)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("runners not upgraded: %+v", c)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// A Security Council cancel from the CLI: nine members in genesis, seven
// sign offline, anyone submits; the queued proposal is cancelled and never
// executes. Six signatures, and a power the Council lacks, are refused.
func TestGovernanceCouncilCancel(t *testing.T) {
	home := filepath.Join(t.TempDir(), "node")
	cliHome := t.TempDir()
	if out, err := exec.Command(filepath.Join(binDir, "cowboyd"), "init", "--dev", "--home", home).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	// Nine Council keys, and a Tier 0 timelock long enough to act in.
	councilGenesis(t, cliHome, 0, filepath.Join(home, "genesis.json"))
	d := startNode(t, home, freePort(t), 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli(t, d, cliHome, "keys", "import", "val", "--key-file", filepath.Join(home, "validator.key"), "--light-kdf")
	for i := 0; i < 9; i++ {
		cli(t, d, cliHome, "keys", "import", fmt.Sprintf("c%d", i), "--key-file", filepath.Join(cliHome, fmt.Sprintf("c%d.hex", i)), "--light-kdf")
	}
	var council apitypes.GovCouncil
	cliJSON(t, d, cliHome, &council, "council", "show")
	if len(council.Members) != 9 || council.Threshold != 7 || council.Nonce != 0 {
		t.Fatalf("council %+v", council)
	}

	out := cli(t, d, cliHome, "gov", "propose", "--tier", "0", "--param", "runners.heartbeat_timeout_blocks=90", "--title", "to cancel", "--from", "val")
	m := proposalID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("propose: %s", out)
	}
	cli(t, d, cliHome, "gov", "vote", m[1], "yes", "--from", "val")
	waitProposal(ctx, t, d, cliHome, m[1], "queued")

	registry := types.RunnerRegistryAddress.String()
	sigsFor := func(action, target string, n int) []string {
		return councilSigs(t, d, cliHome, "7357", action, target, n)
	}
	out = cliFails(t, d, cliHome, append([]string{"council", "cancel", m[1], "--from", "val"}, sigsFor("cancel", m[1], 6)...)...)
	if !strings.Contains(out, "CouncilSignatures") {
		t.Fatalf("six signatures: %s", out)
	}
	// Fast-track rolls an upgraded actor back; the Registry was never upgraded.
	out = cliFails(t, d, cliHome, append([]string{"council", "fast-track", registry, "--from", "val"}, sigsFor("fast-track", registry, 7)...)...)
	if !strings.Contains(out, "NoRollback") {
		t.Fatalf("fast-track: %s", out)
	}
	cli(t, d, cliHome, append([]string{"council", "cancel", m[1], "--from", "val"}, sigsFor("cancel", m[1], 7)...)...)
	var p apitypes.GovProposal
	cliJSON(t, d, cliHome, &p, "gov", "show", m[1])
	if p.Status != "cancelled" {
		t.Fatalf("proposal %+v", p)
	}
	var ps apitypes.Params
	cliJSON(t, d, cliHome, &ps, "params", "runners.heartbeat_timeout_blocks")
	if ps.Params[0].Value != 60 {
		t.Fatalf("a cancelled change applied: %+v", ps.Params[0])
	}
	out = cliFails(t, d, cliHome, "gov", "execute", m[1], "--from", "val")
	if !strings.Contains(out, "NotQueued") {
		t.Fatalf("execute a cancelled proposal: %s", out)
	}
}

// On a 4-validator `cowboy testnet`, the validators vote a Tier 0
// parameter change through their own nodes; it executes and is in force on
// every node, and the nodes agree on the chain. On the same network, from
// the CLI: a Tier 2 treasury disbursement passes and is paid on every node,
// and a Security Council cancel with seven offline signatures (six are
// refused) cancels a queued Tier 1 proposal on every node.
func TestGovernanceTestnet(t *testing.T) {
	tn := newTestnet(t, 4)
	all := []int{0, 1, 2, 3}
	cliHome := t.TempDir()
	var gpaths []string
	for _, i := range all {
		gpaths = append(gpaths, node.GenesisPath(tn.man.Nodes[i].Home))
	}
	// Tier 1 gets the long timelock; Tier 0 and 2 keep the short one.
	councilGenesis(t, cliHome, 1, gpaths...)
	for _, i := range all {
		tn.start(i)
	}
	tn.waitHeight(2, 60*time.Second, all...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	keys := make([]*ecdsa.PrivateKey, len(all))
	for _, i := range all {
		k, err := node.LoadKeyFile(filepath.Join(tn.man.Nodes[i].Home, "validator.key"))
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	one, _ := sdk.ParseCBY("1")
	tx, err := tn.client(0).Account(keys[0]).Gov().Propose(ctx, &types.GovPropose{Tier: 0, Title: "heartbeat",
		Params: []types.GovParam{{Key: "runners.heartbeat_timeout_blocks", Value: 90}}}, one, sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tn.client(0).Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil || r.Receipt == nil || r.Receipt.Status != "success" {
		t.Fatalf("propose: %+v %v", r, err)
	}
	id := system.FromBE8(r.Receipt.Return)

	// From the CLI: each validator's key, and the Council's.
	for _, i := range all {
		cli(t, tn.procs[i], cliHome, "keys", "import", fmt.Sprintf("val%d", i), "--key-file", filepath.Join(tn.man.Nodes[i].Home, "validator.key"), "--light-kdf")
	}
	for i := 0; i < 9; i++ {
		cli(t, tn.procs[0], cliHome, "keys", "import", fmt.Sprintf("c%d", i), "--key-file", filepath.Join(cliHome, fmt.Sprintf("c%d.hex", i)), "--light-kdf")
	}
	bob := types.Address{0xb0, 0xb0}
	out := cli(t, tn.procs[1], cliHome, "gov", "propose", "--tier", "2", "--disburse", bob.String()+":10", "--title", "pay bob", "--from", "val1")
	m := proposalID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("propose: %s", out)
	}
	pay := m[1]
	out = cli(t, tn.procs[2], cliHome, "gov", "propose", "--tier", "1", "--param", "runners.heartbeat_timeout_blocks=120", "--title", "to cancel", "--from", "val2")
	if m = proposalID.FindStringSubmatch(out); m == nil {
		t.Fatalf("propose: %s", out)
	}
	doomed := m[1]
	for _, i := range all {
		for _, pid := range []string{pay, doomed} {
			cli(t, tn.procs[i], cliHome, "gov", "vote", pid, "yes", "--from", fmt.Sprintf("val%d", i))
		}
	}

	for _, i := range all {
		vt, err := tn.client(i).Account(keys[i]).Gov().Vote(ctx, id, types.VoteYes, sdk.TxOptions{})
		if err != nil {
			t.Fatalf("node%d vote: %v", i, err)
		}
		if r, err := tn.client(i).Chain().WaitForReceipt(ctx, vt.Hash()); err != nil || r.Receipt == nil || r.Receipt.Status != "success" {
			t.Fatalf("node%d vote: %+v %v", i, r, err)
		}
	}
	for _, i := range all {
		for {
			p, err := tn.client(i).Gov().Proposal(ctx, id)
			if err == nil && p.Status == "executed" {
				if p.Validators.Yes != "4" || p.Validators.Total != "4" || !p.QuorumReached {
					t.Fatalf("node%d: %+v", i, p)
				}
				break
			}
			if err == nil && p.Status != "voting" && p.Status != "queued" {
				t.Fatalf("node%d: proposal %+v", i, p)
			}
			select {
			case <-ctx.Done():
				t.Fatalf("node%d: proposal not executed: %+v %v", i, p, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
		ps, err := tn.client(i).Gov().Params(ctx, "runners.heartbeat_timeout_blocks")
		if err != nil || len(ps.Params) != 1 || ps.Params[0].Value != 90 {
			t.Fatalf("node%d params %+v: %v", i, ps, err)
		}
	}

	// The disbursement passes and is paid, as every node sees it.
	ten, _ := sdk.ParseCBY("10")
	for _, i := range all {
		p := waitProposal(ctx, t, tn.procs[i], cliHome, pay, "executed")
		if p.Validators.Yes != "4" || !p.QuorumReached {
			t.Fatalf("node%d: %+v", i, p)
		}
		var tr apitypes.Treasury
		cliJSON(t, tn.procs[i], cliHome, &tr, "treasury", "show")
		if tr.Disbursed != ten.String() || tr.Disbursements != 1 {
			t.Fatalf("node%d treasury %+v", i, tr)
		}
		checkBalance(t, tn.client(i), bob, ten)
	}

	// The Council cancels the queued Tier 1 proposal: six signatures are
	// refused, seven cancel it on every node.
	waitProposal(ctx, t, tn.procs[3], cliHome, doomed, "queued")
	chainID := fmt.Sprint(tn.man.ChainID)
	out = cliFails(t, tn.procs[3], cliHome, append([]string{"council", "cancel", doomed, "--from", "val3"},
		councilSigs(t, tn.procs[3], cliHome, chainID, "cancel", doomed, 6)...)...)
	if !strings.Contains(out, "CouncilSignatures") {
		t.Fatalf("six signatures: %s", out)
	}
	cli(t, tn.procs[3], cliHome, append([]string{"council", "cancel", doomed, "--from", "val3"},
		councilSigs(t, tn.procs[3], cliHome, chainID, "cancel", doomed, 7)...)...)
	for _, i := range all {
		waitProposal(ctx, t, tn.procs[i], cliHome, doomed, "cancelled")
		var council apitypes.GovCouncil
		cliJSON(t, tn.procs[i], cliHome, &council, "council", "show")
		if council.Nonce != 1 {
			t.Fatalf("node%d council %+v", i, council)
		}
		ps, err := tn.client(i).Gov().Params(ctx, "runners.heartbeat_timeout_blocks")
		if err != nil || len(ps.Params) != 1 || ps.Params[0].Value != 90 {
			t.Fatalf("node%d: a cancelled change applied: %+v %v", i, ps, err)
		}
	}
	out = cliFails(t, tn.procs[0], cliHome, "gov", "execute", doomed, "--from", "val0")
	if !strings.Contains(out, "NotQueued") {
		t.Fatalf("execute a cancelled proposal: %s", out)
	}
	tn.checkSameChain(all...)
}
