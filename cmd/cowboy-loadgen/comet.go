package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// cometChain drives CometBFT 0.38 nodes running the built-in kvstore app
// through their RPC: broadcast_tx_sync (CheckTx, like Cowboy's admission),
// /status and /block. Transactions are key=value pairs padded to the size
// of a signed Cowboy transfer.
type cometChain struct {
	urls []string
	hc   *http.Client
	run  string
	seq  int
}

// txSize is about the size of a Cowboy transfer's canonical encoding.
const txSize = 170

func newComet(urls []string) *cometChain {
	tr := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return &cometChain{urls: urls, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, run: hex.EncodeToString(r[:])}
}

func (c *cometChain) rpc(ctx context.Context, url, method string, params any, out any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
			Data    string `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s: %s", method, b)
	}
	if env.Error != nil {
		return &rpcError{env.Error.Message + ": " + env.Error.Data}
	}
	return json.Unmarshal(env.Result, out)
}

type rpcError struct{ msg string }

func (e *rpcError) Error() string { return e.msg }

func (c *cometChain) Setup(ctx context.Context) error { _, err := c.Final(ctx); return err }

func (c *cometChain) Prepare(_ context.Context, workers, n int) ([][][]wireTx, error) {
	out := make([][][]wireTx, workers)
	for w := range out {
		out[w] = [][]wireTx{nil}
	}
	for i := range n {
		c.seq++
		kv := fmt.Sprintf("lg%s-%09d=", c.run, c.seq)
		tx := append([]byte(kv), bytes.Repeat([]byte{'v'}, max(txSize-len(kv), 1))...)
		sum := sha256.Sum256(tx)
		out[i%workers][0] = append(out[i%workers][0], wireTx{id: hex.EncodeToString(sum[:]), body: tx})
	}
	return out, nil
}

func (c *cometChain) Submit(ctx context.Context, worker int, tx wireTx) (bool, string, error) {
	var r struct {
		Code uint32 `json:"code"`
		Log  string `json:"log"`
	}
	err := c.rpc(ctx, c.urls[worker%len(c.urls)], "broadcast_tx_sync", map[string]any{"tx": base64.StdEncoding.EncodeToString(tx.body)}, &r)
	if _, ok := err.(*rpcError); ok {
		return false, "rpc_error", nil // mempool full, tx in cache, ...
	}
	if err != nil {
		return false, "", err
	}
	if r.Code != 0 {
		return false, "code_" + strconv.Itoa(int(r.Code)), nil
	}
	return true, "", nil
}

func (c *cometChain) Nodes() int { return len(c.urls) }

func (c *cometChain) Final(ctx context.Context) (uint64, error) {
	var st struct {
		SyncInfo struct {
			Height string `json:"latest_block_height"`
		} `json:"sync_info"`
	}
	if err := c.rpc(ctx, c.urls[0], "status", map[string]any{}, &st); err != nil {
		return 0, err
	}
	return strconv.ParseUint(st.SyncInfo.Height, 10, 64)
}

func (c *cometChain) Block(ctx context.Context, h uint64) (time.Time, []string, error) {
	var b struct {
		Block struct {
			Header struct {
				Time time.Time `json:"time"`
			} `json:"header"`
			Data struct {
				Txs []string `json:"txs"`
			} `json:"data"`
		} `json:"block"`
	}
	if err := c.rpc(ctx, c.urls[0], "block", map[string]any{"height": strconv.FormatUint(h, 10)}, &b); err != nil {
		return time.Time{}, nil, err
	}
	ids := make([]string, 0, len(b.Block.Data.Txs))
	for _, t := range b.Block.Data.Txs {
		raw, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return time.Time{}, nil, err
		}
		sum := sha256.Sum256(raw)
		ids = append(ids, hex.EncodeToString(sum[:]))
	}
	return b.Block.Header.Time, ids, nil
}
