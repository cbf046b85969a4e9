package entitlement

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// EthEvent formats an "eth" manifest parameter: the Ethereum chain id,
// the contract address and the event signature hash (topic 0), both
// lower-case 0x-hex. A nil topic gives the wildcard "*" (every event of
// the contract).
func EthEvent(chainID uint64, contract [20]byte, topic *[32]byte) string {
	t := "*"
	if topic != nil {
		t = "0x" + hex.EncodeToString(topic[:])
	}
	return fmt.Sprintf("%d:0x%s:%s", chainID, hex.EncodeToString(contract[:]), t)
}

// validEthEvent checks one "eth" parameter's form.
func validEthEvent(p string) error {
	parts := strings.Split(p, ":")
	if len(parts) != 3 {
		return fmt.Errorf("%q: want CHAINID:0xCONTRACT:0xTOPIC0 (or :* for every event)", p)
	}
	if _, err := strconv.ParseUint(parts[0], 10, 64); err != nil {
		return fmt.Errorf("%q: chain id %q is not a decimal number", p, parts[0])
	}
	if !isLowerHex(parts[1], 20) {
		return fmt.Errorf("%q: contract %q is not a lower-case 0x-prefixed 20-byte address", p, parts[1])
	}
	if parts[2] != "*" && !isLowerHex(parts[2], 32) {
		return fmt.Errorf("%q: topic %q is not a lower-case 0x-prefixed 32-byte hash or *", p, parts[2])
	}
	return nil
}

func isLowerHex(s string, n int) bool {
	body, ok := strings.CutPrefix(s, "0x")
	if !ok || len(body) != 2*n || strings.ToLower(body) != body {
		return false
	}
	_, err := hex.DecodeString(body)
	return err == nil
}

// CheckEth is the gate of an Ethereum event subscription: the manifest
// must declare the contract on the chain, with this event or the
// wildcard.
func (m Manifest) CheckEth(op string, chainID uint64, contract [20]byte, topic [32]byte) error {
	eth, _ := m.Find(NameEth)
	if slices.Contains(eth.Params, EthEvent(chainID, contract, &topic)) || slices.Contains(eth.Params, EthEvent(chainID, contract, nil)) {
		return nil
	}
	return &MissingError{Op: op, Entitlement: NameEth + ":" + EthEvent(chainID, contract, &topic)}
}
