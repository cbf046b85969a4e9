package cmdutil

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// EnvOr is the environment variable name, or def when it is unset or empty.
func EnvOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// ResolveAddress accepts a 0x address or the name of a key in the keystore.
func (f *Factory) ResolveAddress(s string) (types.Address, error) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return types.ParseAddress(s)
	}
	ks, err := f.Keys()
	if err != nil {
		return types.Address{}, err
	}
	e, err := ks.Get(s)
	if err != nil {
		return types.Address{}, fmt.Errorf("%q is neither a 0x address nor a key name: %w", s, err)
	}
	return e.Address, nil
}

// Signer unlocks the key named by --from, or the only key if there is one.
func (f *Factory) Signer(from string) (*ecdsa.PrivateKey, error) {
	ks, err := f.Keys()
	if err != nil {
		return nil, err
	}
	if from == "" {
		list, err := ks.List()
		if err != nil {
			return nil, err
		}
		if len(list) != 1 {
			return nil, fmt.Errorf("--from is required (%d keys in %s/keys)", len(list), f.Home)
		}
		from = list[0].Name
	}
	pass, err := f.Password(fmt.Sprintf("Password for key %s: ", from), false)
	if err != nil {
		return nil, err
	}
	return ks.Unlock(from, pass)
}

// AddressOrOnlyKey resolves s, or the only key in the keystore when s is "".
func (f *Factory) AddressOrOnlyKey(s string) (types.Address, error) {
	if s != "" {
		return f.ResolveAddress(s)
	}
	ks, err := f.Keys()
	if err != nil {
		return types.Address{}, err
	}
	list, err := ks.List()
	if err != nil {
		return types.Address{}, err
	}
	if len(list) != 1 {
		return types.Address{}, fmt.Errorf("name an address or key (%d keys in %s/keys)", len(list), f.Home)
	}
	return list[0].Address, nil
}

// WaitReceipt waits for a submitted transaction's receipt.
func (f *Factory) WaitReceipt(ctx context.Context, h types.Hash, timeout time.Duration) (*apitypes.TxResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return f.Client().Chain().WaitForReceipt(ctx, h)
}
