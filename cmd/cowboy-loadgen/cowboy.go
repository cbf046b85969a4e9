package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// cowboyChain sends transfers between accounts it funds from node0's
// faucet through a tree: the faucet grants distributors, which pay the
// senders.
type cowboyChain struct {
	urls    []string
	hc      *http.Client
	log     *slog.Logger
	keys    []*ecdsa.PrivateKey
	chainID uint64
	maxFee  uint64
}

func newCowboy(urls []string, accounts int, log *slog.Logger) *cowboyChain {
	tr := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}
	c := &cowboyChain{urls: urls, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, log: log}
	for range accounts {
		k, _ := crypto.GenerateKey()
		c.keys = append(c.keys, k)
	}
	return c
}

func (c *cowboyChain) get(ctx context.Context, url string, out any) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}

func (c *cowboyChain) post(ctx context.Context, url, ctype string, body []byte) (int, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (c *cowboyChain) Setup(ctx context.Context) error {
	var st apitypes.Status
	if err := c.get(ctx, c.urls[0]+"/v1/status", &st); err != nil {
		return err
	}
	var fs apitypes.Fees
	if err := c.get(ctx, c.urls[0]+"/v1/fees", &fs); err != nil {
		return err
	}
	c.chainID = st.ChainID
	// Room for the basefee to rise a long way: a sweep keeps blocks above
	// the fee target for minutes (+12.5% a block), and senders capped
	// lower would throttle blocks to the target, measuring the fee market
	// rather than the chain.
	c.maxFee = max(fs.BasefeeCycle*10_000, 1)
	// Fund: faucet → distributors → senders, each stage one batch.
	perTx := new(big.Int).Mul(new(big.Int).SetUint64(fees.TransferCycles), new(big.Int).SetUint64(c.maxFee))
	perSender := new(big.Int).Mul(perTx, big.NewInt(2_000)) // 64 pending at the cap, and the sweep's spending
	const fanout = 32
	nd := (len(c.keys) + fanout - 1) / fanout
	dist := make([]*ecdsa.PrivateKey, nd)
	var grants []types.Hash
	for i := range dist {
		dist[i], _ = crypto.GenerateKey()
		need := new(big.Int).Mul(perSender, big.NewInt(fanout+1))
		body, _ := json.Marshal(apitypes.Faucet{Address: types.PubkeyToAddress(dist[i].PublicKey), Value: need.String()})
		code, b, err := c.post(ctx, c.urls[0]+"/v1/faucet", "application/json", body)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("faucet: %d %s %v (the faucet caps one grant; see cowboyd --faucet-max)", code, b, err)
		}
		var r apitypes.SubmitTxResult
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		grants = append(grants, r.Hash)
	}
	// Distributors pay through node0, which has executed their grants.
	if err := c.waitFinal(ctx, grants); err != nil {
		return err
	}
	var pays []types.Hash
	for i, k := range c.keys {
		d := dist[i/fanout]
		tx, err := c.sign(d, uint64(i%fanout), types.PubkeyToAddress(k.PublicKey), perSender)
		if err != nil {
			return err
		}
		if ok, code, err := c.Submit(ctx, 0, wireTx{id: tx.Hash().String(), body: tx.Encode()}); err != nil || !ok {
			return fmt.Errorf("fund sender %d: %s %v", i, code, err)
		}
		pays = append(pays, tx.Hash())
	}
	if err := c.waitFinal(ctx, pays); err != nil {
		return err
	}
	c.log.Info("funded senders", "accounts", len(c.keys), "distributors", nd)
	return nil
}

func (c *cowboyChain) waitFinal(ctx context.Context, hs []types.Hash) error {
	deadline := time.Now().Add(60 * time.Second)
	for _, h := range hs {
		for {
			var r apitypes.TxResult
			err := c.get(ctx, c.urls[0]+"/v1/txs/"+h.String(), &r)
			if err == nil && r.Status == apitypes.TxIncluded {
				if r.Receipt == nil || r.Receipt.Status != "success" {
					return fmt.Errorf("funding transaction %s failed", h)
				}
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("funding transaction %s not final: %v", h, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func (c *cowboyChain) sign(key *ecdsa.PrivateKey, nonce uint64, to types.Address, value *big.Int) (*types.Tx, error) {
	tx, err := types.NewTx(types.TxData{ChainID: c.chainID, Nonce: nonce, To: &to, Value: value,
		CyclesLimit: fees.TransferCycles, MaxFeePerCycle: c.maxFee, MaxFeePerCell: c.maxFee, TipPerCycle: 1, Payload: types.Bytes{}})
	if err != nil {
		return nil, err
	}
	return types.SignTx(tx, key)
}

// Prepare signs n transfers in parallel: sender s belongs to worker
// s mod workers, so it submits through one node only (the worker's), and
// its nonces continue from its pending nonce at that node, which holds
// every transaction it accepted from the sender (another node's pool may
// lack some it was gossiped, and would hand out nonces already used).
func (c *cowboyChain) Prepare(ctx context.Context, workers, n int) ([][][]wireTx, error) {
	nonces := make([]uint64, len(c.keys))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ferr error
	)
	sem := make(chan struct{}, 32)
	for i, k := range c.keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var a apitypes.Account
			url := c.urls[(i%workers)%len(c.urls)] // Submit's node for the sender's worker
			if err := c.get(ctx, fmt.Sprintf("%s/v1/accounts/%s", url, types.PubkeyToAddress(k.PublicKey)), &a); err != nil {
				mu.Lock()
				ferr = err
				mu.Unlock()
				return
			}
			nonces[i] = a.PendingNonce
		}()
	}
	wg.Wait()
	if ferr != nil {
		return nil, ferr
	}
	per := (n + len(c.keys) - 1) / len(c.keys)
	txs := make([][]wireTx, len(c.keys))
	par := runtime.NumCPU()
	errs := make(chan error, par)
	for p := range par {
		go func() {
			for s := p; s < len(c.keys); s += par {
				for j := range per {
					to := types.Address{0xbe, byte(s), byte(s >> 8), byte(j)}
					tx, err := c.sign(c.keys[s], nonces[s]+uint64(j), to, big.NewInt(1))
					if err != nil {
						errs <- err
						return
					}
					txs[s] = append(txs[s], wireTx{id: tx.Hash().String(), body: tx.Encode()})
				}
			}
			errs <- nil
		}()
	}
	for range par {
		if err := <-errs; err != nil {
			return nil, err
		}
	}
	out := make([][][]wireTx, workers)
	for s := range txs {
		out[s%workers] = append(out[s%workers], txs[s])
	}
	for w := range out {
		if len(out[w]) == 0 {
			return nil, errors.New("more workers than accounts")
		}
	}
	return out, nil
}

func (c *cowboyChain) Submit(ctx context.Context, worker int, tx wireTx) (bool, string, error) {
	code, b, err := c.post(ctx, c.urls[worker%len(c.urls)]+"/v1/txs", "application/cbor", tx.body)
	if err != nil {
		return false, "", err
	}
	if code == http.StatusOK {
		return true, "", nil
	}
	var e apitypes.Error
	if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
		return false, e.Error.Code, nil
	}
	return false, fmt.Sprintf("http_%d", code), nil
}

func (c *cowboyChain) Nodes() int { return len(c.urls) }

func (c *cowboyChain) Scrape(ctx context.Context, node int) (map[string]float64, error) {
	return scrapeMempool(ctx, c.hc, c.urls[node]+"/metrics")
}

func (c *cowboyChain) Final(ctx context.Context) (uint64, error) {
	var st apitypes.Status
	if err := c.get(ctx, c.urls[0]+"/v1/status", &st); err != nil {
		return 0, err
	}
	return st.Height, nil // the executed head: receipts readable and final
}

func (c *cowboyChain) Block(ctx context.Context, h uint64) (time.Time, []string, error) {
	var b apitypes.Block
	if err := c.get(ctx, fmt.Sprintf("%s/v1/blocks/%d", c.urls[0], h), &b); err != nil {
		return time.Time{}, nil, err
	}
	ids := make([]string, len(b.TxHashes))
	for i, h := range b.TxHashes {
		ids[i] = h.String()
	}
	return time.UnixMilli(int64(b.Header.Timestamp)), ids, nil
}

func (c *cowboyChain) Round(ctx context.Context) (uint64, uint64, error) {
	var st apitypes.Status
	if err := c.get(ctx, c.urls[0]+"/v1/status", &st); err != nil {
		return 0, 0, err
	}
	if st.Consensus == nil {
		return 0, st.CommittedHeight, nil
	}
	return st.Consensus.Round, st.CommittedHeight, nil
}
