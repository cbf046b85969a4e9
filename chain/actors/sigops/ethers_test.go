package sigops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/actors/sigops"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// nodeBin is the Node 22 that `make deps` installs in the repository's
// node_modules (package.json), beside ethers.
func nodeBin(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	node := filepath.Join(root, "node_modules", ".bin", "node")
	for _, p := range []string{node, filepath.Join(root, "node_modules", "ethers", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: run `make deps` (npm ci installs node and ethers from package.json): %v", p, err)
		}
	}
	return node
}

// ethersSign runs testdata/ethers_sign.mjs.
func ethersSign(t *testing.T, key string, typedData json.RawMessage, message string) map[string]string {
	t.Helper()
	in, err := json.Marshal(map[string]any{"key": key, "typed_data": typedData, "message": message})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin(t), filepath.Join("testdata", "ethers_sign.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ethers: %v\n%s", err, stderr.String())
	}
	var res map[string]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ethers output %q: %v", out, err)
	}
	return res
}

// Signatures made by ethers, an Ethereum implementation independent of
// go-ethereum, verify: the EIP-712 hash agrees, the typed-data signature
// recovers the signer, and a raw signature of keccak256(message) passes
// verify_signature. Tampering or another chain does not.
func TestEthersSignatures(t *testing.T) {
	const key = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	td := []byte(mailJSON)
	res := ethersSign(t, key, td, "transfer 7 to bob")
	signer := addr(t, res["address"])
	hash, _, err := sigops.TypedDataHash(td)
	if err != nil {
		t.Fatal(err)
	}
	if got := hexutil.Encode(hash); got != res["eip712_hash"] {
		t.Fatalf("EIP-712 hash: go-ethereum %s, ethers %s", got, res["eip712_hash"])
	}
	sig := hexutil.MustDecode(res["eip712_sig"])
	if ok, err := sigops.VerifyEIP712(td, sig, signer, big.NewInt(1)); err != nil || !ok {
		t.Fatalf("ethers' EIP-712 signature: %v %v", ok, err)
	}
	if ok, err := sigops.VerifyEIP712(td, sig, addr(t, mailSigner), nil); err != nil || ok {
		t.Fatalf("ethers' signature credited to another address: %v %v", ok, err)
	}
	raw := hexutil.MustDecode(res["sig"])
	if ok, err := sigops.VerifySignature("secp256k1", signer[:], []byte("transfer 7 to bob"), raw); err != nil || !ok {
		t.Fatalf("ethers' raw signature: %v %v", ok, err)
	}
	if ok, err := sigops.VerifySignature("secp256k1", signer[:], []byte("transfer 8 to bob"), raw); err != nil || ok {
		t.Fatalf("ethers' raw signature of another message: %v %v", ok, err)
	}
}
