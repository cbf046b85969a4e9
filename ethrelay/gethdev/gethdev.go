// Package gethdev runs a throwaway `geth --dev` Ethereum chain (one block a
// second, a funded and unlocked developer account) for the bridge tests
// and the demo, and deploys contracts on it.
package gethdev

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	ethtypes "github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// ErrNoGeth is returned by Find when no geth binary is installed.
var ErrNoGeth = errors.New("gethdev: geth not found: run `make deps` (it installs bin/tools/geth)")

// Find returns the geth to run: $COWBOY_GETH, bin/tools/geth in the
// repository holding dir (or a parent), or geth on PATH.
func Find(dir string) (string, error) {
	if p := os.Getenv("COWBOY_GETH"); p != "" {
		return p, nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "bin", "tools", "geth")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if p, err := exec.LookPath("geth"); err == nil {
		return p, nil
	}
	return "", ErrNoGeth
}

// Chain is a running geth --dev.
type Chain struct {
	URL     string
	Client  *ethclient.Client
	RPC     *rpc.Client
	Dev     common.Address // the funded, unlocked developer account
	cmd     *exec.Cmd
	done    chan struct{} // closed when geth has exited
	waitErr error         // geth's exit, once done is closed
	close   sync.Once
}

// Start runs geth --dev in dir (its data directory and log) and waits,
// until ctx ends, for its HTTP JSON-RPC to answer. If geth exits while
// starting (another process took the free port it was given), it is
// started again on a new port, up to three times.
func Start(ctx context.Context, geth, dir string) (*Chain, error) {
	var err error
	for attempt := range 3 {
		var c *Chain
		c, err = start(ctx, geth, filepath.Join(dir, strconv.Itoa(attempt)))
		if err == nil || !errors.Is(err, errExited) {
			return c, err
		}
	}
	return nil, err
}

var errExited = errors.New("gethdev: geth exited")

func start(ctx context.Context, geth, dir string) (*Chain, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "geth.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(geth, "--dev", "--dev.period", "1", "--datadir", filepath.Join(dir, "data"),
		"--http", "--http.addr", "127.0.0.1", "--http.port", strconv.Itoa(port), "--http.api", "eth,net,web3",
		"--ipcdisable", "--port", "0", "--authrpc.port", "0", "--nodiscover", "--maxpeers", "0", "--verbosity", "2")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("gethdev: start %s: %w", geth, err)
	}
	c := &Chain{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, done: make(chan struct{})}
	go func() { c.waitErr = cmd.Wait(); logf.Close(); close(c.done) }()
	if err := c.wait(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w (log: %s)", err, logf.Name())
	}
	return c, nil
}

// Dial connects to a running geth --dev at url (no process to stop).
func Dial(ctx context.Context, url string) (*Chain, error) {
	c := &Chain{URL: url, done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Chain) wait(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if r, err := rpc.DialContext(ctx, c.URL); err == nil {
			var accts []common.Address
			if err := r.CallContext(ctx, &accts, "eth_accounts"); err == nil && len(accts) > 0 {
				c.RPC, c.Client, c.Dev = r, ethclient.NewClient(r), accts[0]
				return nil
			}
			r.Close()
		}
		select {
		case <-c.done:
			return fmt.Errorf("%w: %v", errExited, c.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("gethdev: geth did not answer at %s: %w", c.URL, ctx.Err())
		case <-tick.C:
		}
	}
}

// Send sends a transaction from the developer account (to nil: a
// contract creation) and waits for its receipt until ctx ends.
func (c *Chain) Send(ctx context.Context, to *common.Address, data []byte) (*ethtypes.Receipt, error) {
	arg := map[string]any{"from": c.Dev, "data": hexutil.Bytes(data), "gas": hexutil.Uint64(1_000_000)}
	if to != nil {
		arg["to"] = *to
	}
	var h common.Hash
	if err := c.RPC.CallContext(ctx, &h, "eth_sendTransaction", arg); err != nil {
		return nil, fmt.Errorf("gethdev: send: %w", err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := c.Client.TransactionReceipt(ctx, h)
		if err == nil {
			if r.Status != ethtypes.ReceiptStatusSuccessful {
				return r, fmt.Errorf("gethdev: transaction %s reverted", h)
			}
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("gethdev: receipt of %s: %w", h, ctx.Err())
		case <-tick.C:
		}
	}
}

// Deploy creates a contract from initCode and returns its address.
func (c *Chain) Deploy(ctx context.Context, initCode []byte) (common.Address, error) {
	r, err := c.Send(ctx, nil, initCode)
	if err != nil {
		return common.Address{}, err
	}
	return r.ContractAddress, nil
}

// Close stops geth (interrupt, then kill after 10s) and waits for it; it
// is safe to call twice.
func (c *Chain) Close() { c.close.Do(c.stop) }

func (c *Chain) stop() {
	if c.RPC != nil {
		c.RPC.Close()
	}
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
