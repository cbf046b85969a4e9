package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser drives Debian's headless Chromium (make deps installs it) through
// the DevTools protocol. Screenshots go to the artifacts directory.
type browser struct {
	t         *testing.T
	ctx       context.Context
	node      string
	artifacts string
}

// chromiumPath finds the browser make deps installs.
func chromiumPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH: run `make deps` (Debian package chromium)")
}

// artifactsDir is COWBOY_TEST_ARTIFACTS or test-artifacts/ at the repo root.
func artifactsDir(t *testing.T, root, sub string) string {
	base := os.Getenv("COWBOY_TEST_ARTIFACTS")
	if base == "" {
		base = filepath.Join(root, "test-artifacts")
	}
	dir := filepath.Join(base, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newBrowser(t *testing.T, node, artifacts string) *browser {
	exe, err := chromiumPath()
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, // tests run as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1280, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx, node: node, artifacts: artifacts}
}

// open navigates to a hash route and waits until the page has rendered.
func (b *browser) open(route string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	url := b.node + "/explorer/#" + route
	// A fresh navigation per page: hash changes on the same document would
	// leave the previous page's data-loaded marker in place.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`#page[data-loaded]`))); err != nil {
		b.t.Fatalf("open %s: %v", route, err)
	}
	errText, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById('error')||{}).textContent||''`))
	if errText != "" {
		b.t.Fatalf("page %s shows an error: %s", route, errText)
	}
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	// Quality 100 asks for PNG; below it Chromium sends JPEG.
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.artifacts, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// eval runs a JavaScript expression and decodes its JSON-able result.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("eval %s: %v", expr, err)
	}
	return v
}

// raw is the exact value a [data-field] element shows (its data-raw when
// the page formatted a number or an amount).
func (b *browser) raw(field string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf(`(() => { const el = document.querySelector('[data-field=%q]'); if (!el) return '<missing>';
		const r = el.querySelector('[data-raw]'); return r ? r.getAttribute('data-raw') : el.textContent.trim(); })()`, field))
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	return eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// checkExplorer loads every explorer page against a devnet that ran the
// demo scenario and checks that what it shows matches the API.
func checkExplorer(t *testing.T, node, artifacts string) {
	b := newBrowser(t, node, artifacts)
	api := func(path string, out any) { getJSON(t, node+"/v1"+path, out) }

	// Chain status: static figures equal, live ones follow the stream.
	var st struct {
		Height        uint64 `json:"height"`
		GenesisSupply string `json:"genesis_supply"`
		Faucet        bool   `json:"faucet"`
	}
	api("/status", &st)
	b.open("/")
	if got := b.raw("genesis_supply"); got != st.GenesisSupply {
		t.Errorf("chain page genesis supply %s, API %s", got, st.GenesisSupply)
	}
	h0, _ := strconv.ParseUint(b.raw("height"), 10, 64)
	if h0+20 < st.Height || h0 == 0 {
		t.Errorf("chain page height %d, API %d", h0, st.Height)
	}
	if n := b.count("#blocks tr"); n != 20 {
		t.Errorf("chain page lists %d blocks, want 20", n)
	}
	b.screenshot("chain")
	// The stream moves the page without a reload.
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, _ := strconv.ParseUint(b.raw("height"), 10, 64)
		if h > h0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chain page height stuck at %d: live updates do not arrive", h0)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// A transfer: tx page figures equal the API's.
	var transfers struct {
		Events []struct {
			TxHash  string          `json:"tx_hash"`
			Height  uint64          `json:"height"`
			Decoded json.RawMessage `json:"decoded"`
		} `json:"events"`
	}
	api("/events?topic=transfer&limit=5", &transfers)
	if len(transfers.Events) == 0 {
		t.Fatal("the demo left no transfer events")
	}
	var tx struct {
		BlockHeight uint64 `json:"block_height"`
		Tx          struct {
			From  string `json:"from"`
			To    string `json:"to"`
			Value string `json:"value"`
		} `json:"tx"`
		Receipt struct {
			FeePaid string `json:"fee_paid"`
		} `json:"receipt"`
	}
	ev := transfers.Events[len(transfers.Events)-1]
	api("/txs/"+ev.TxHash, &tx)
	b.open("/tx/" + ev.TxHash)
	for field, want := range map[string]string{"value": tx.Tx.Value, "fee_paid": tx.Receipt.FeePaid, "block_height": strconv.FormatUint(tx.BlockHeight, 10)} {
		if got := b.raw(field); got != want {
			t.Errorf("tx page %s = %s, API %s", field, got, want)
		}
	}
	b.screenshot("tx")

	// The block holding it.
	b.open("/block/" + strconv.FormatUint(tx.BlockHeight, 10))
	var blk struct {
		Receipts []json.RawMessage `json:"receipts"`
		Header   struct {
			StateRoot string `json:"state_root"`
		} `json:"header"`
	}
	api("/blocks/"+strconv.FormatUint(tx.BlockHeight, 10)+"?receipts=true", &blk)
	if got := b.raw("state_root"); got != blk.Header.StateRoot {
		t.Errorf("block page state root %s, API %s", got, blk.Header.StateRoot)
	}
	if n := b.count("#block-receipts tbody tr"); n != len(blk.Receipts) {
		t.Errorf("block page lists %d receipts, API %d", n, len(blk.Receipts))
	}
	b.screenshot("block")

	// The recipient's account.
	var acct struct {
		Balance string `json:"balance"`
	}
	api("/accounts/"+tx.Tx.To, &acct)
	b.open("/account/" + tx.Tx.To)
	if got := b.raw("balance"); got != acct.Balance {
		t.Errorf("account page balance %s, API %s", got, acct.Balance)
	}

	// An actor the demo deployed: code, storage and timers show.
	actor := findCreatedActor(t, node, st.Height)
	var am struct {
		StorageBytes uint64 `json:"storage_bytes"`
	}
	api("/actors/"+actor, &am)
	b.open("/account/" + actor)
	if got := b.raw("storage_bytes"); got != strconv.FormatUint(am.StorageBytes, 10) {
		t.Errorf("actor page storage bytes %s, API %d", got, am.StorageBytes)
	}
	code := eval[string](b, `document.getElementById('code').textContent`)
	if !strings.Contains(code, "def ") {
		t.Errorf("actor page shows no Python code: %.80q", code)
	}
	b.screenshot("actor")

	// Jobs: every job the demo posted, with the API's status, and a settled
	// job's timeline and committee.
	type apiJob struct {
		ID        string   `json:"id"`
		Status    string   `json:"status"`
		Committee []string `json:"committee"`
	}
	var subs struct {
		Events []struct {
			Decoded struct {
				JobID string `json:"job_id"`
			} `json:"decoded"`
		} `json:"events"`
	}
	api("/events?emitter=0x0000000000000000000000000000000000000002&topic=JobSubmitted&limit=1000", &subs)
	if len(subs.Events) == 0 {
		t.Fatal("the demo posted no jobs")
	}
	b.open("/jobs")
	if n := b.count("#job-list tbody tr[data-job]"); n != min(len(subs.Events), 50) {
		t.Errorf("jobs page lists %d jobs, API %d", n, len(subs.Events))
	}
	var settled *apiJob
	for _, e := range subs.Events {
		var j apiJob
		api("/jobs/"+e.Decoded.JobID, &j)
		shown := eval[string](b, fmt.Sprintf(`(document.querySelector('tr[data-job=%q] [data-field=status]')||{}).textContent||''`, j.ID))
		if shown != j.Status {
			t.Errorf("jobs page shows job %s as %q, API %q", j.ID, shown, j.Status)
		}
		if j.Status == "finalized" && settled == nil {
			settled = &j
		}
	}
	b.screenshot("jobs")
	if settled == nil {
		t.Fatal("no finalized job to show")
	}
	b.open("/job/" + settled.ID)
	if n := b.count("#committee tbody tr"); n != len(settled.Committee) {
		t.Errorf("job page committee has %d rows, API %d", n, len(settled.Committee))
	}
	if n := b.count("#timeline li.done"); n < 6 {
		t.Errorf("finalized job's timeline has %d steps done, want ≥ 6 (submitted … paid out)", n)
	}
	b.screenshot("job")

	// Runners and relays: one row per registry record.
	var runners, relays []json.RawMessage
	api("/runners?all=true", &runners)
	api("/relays?all=true", &relays)
	b.open("/runners")
	if n := b.count("#runner-list tbody tr[data-runner]"); n != len(runners) {
		t.Errorf("runners page lists %d, API %d", n, len(runners))
	}
	b.screenshot("runners")
	b.open("/relays")
	if n := b.count("#relay-list tbody tr[data-relay]"); n != len(relays) {
		t.Errorf("relays page lists %d, API %d", n, len(relays))
	}
	b.screenshot("relays")

	// The demo's volume: anchored root and version as the Storage Manager has them.
	var vc struct {
		Events []struct {
			Decoded struct {
				Volume string `json:"volume"`
			} `json:"decoded"`
		} `json:"events"`
	}
	api("/events?emitter=0x000000000000000000000000000000000000000a&topic=VolumeCreated&limit=10", &vc)
	if len(vc.Events) == 0 {
		t.Fatal("the demo created no volume")
	}
	vol := vc.Events[0].Decoded.Volume
	var v struct {
		Root    string `json:"root"`
		Version uint64 `json:"version"`
	}
	api("/volumes/"+vol, &v)
	b.open("/volumes")
	if n := b.count("#volume-list tbody tr[data-volume]"); n != len(vc.Events) {
		t.Errorf("volumes page lists %d, API %d", n, len(vc.Events))
	}
	b.open("/volume/" + vol)
	if got := b.raw("root"); got != v.Root {
		t.Errorf("volume page root %s, API %s", got, v.Root)
	}
	if got := b.raw("version"); got != strconv.FormatUint(v.Version, 10) {
		t.Errorf("volume page version %s, API %d", got, v.Version)
	}
	if n := b.count("#anchors tbody tr"); n == 0 {
		t.Error("volume page shows no anchored roots")
	}
	b.screenshot("volume")

	b.open("/validators")
	b.screenshot("validators")

	// The devnet faucet form sends a transfer the API then shows.
	if st.Faucet {
		to := "0x00000000000000000000000000000000000e4b10"
		b.open("/")
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS(`#faucet input[name=address]`), to),
			chromedp.SetValue(chromedp.CSS(`#faucet input[name=value]`), "1.5"),
			chromedp.Click(chromedp.CSS(`#faucet button`)),
			chromedp.WaitVisible(chromedp.CSS(`#faucet-out a`))); err != nil {
			t.Fatalf("faucet form: %v", err)
		}
		want := new(big.Int).Mul(big.NewInt(15), new(big.Int).Exp(big.NewInt(10), big.NewInt(17), nil)).String()
		for end := time.Now().Add(15 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			api("/accounts/"+to, &acct)
			if acct.Balance == want {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("faucet form: balance %s, want %s", acct.Balance, want)
			}
		}
		b.screenshot("faucet")
	}
}

// findCreatedActor returns an actor a demo transaction created that has
// storage (a counter, say), scanning blocks from the start.
func findCreatedActor(t *testing.T, node string, head uint64) string {
	for h := uint64(1); h <= head; h++ {
		var blk struct {
			Receipts []struct {
				Created string `json:"created"`
			} `json:"receipts"`
		}
		getJSON(t, fmt.Sprintf("%s/v1/blocks/%d?receipts=true", node, h), &blk)
		for _, r := range blk.Receipts {
			if r.Created == "" {
				continue
			}
			var a struct {
				StorageBytes uint64 `json:"storage_bytes"`
			}
			getJSON(t, node+"/v1/actors/"+r.Created, &a)
			if a.StorageBytes > 0 {
				return r.Created
			}
		}
	}
	t.Fatal("the demo deployed no actor with storage")
	return ""
}
