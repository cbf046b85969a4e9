package sdk

import (
	"fmt"
	"math/big"
	"strings"
)

// Decimals is the number of decimal places of CBY: balances are kept in
// base units of 10^-18 CBY.
const Decimals = 18

// ParseAmount parses a decimal string of base units.
func ParseAmount(s string) (*big.Int, error) {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 {
		return nil, fmt.Errorf("invalid amount %q: want a non-negative integer of base units", s)
	}
	return v, nil
}

// ParseCBY parses an amount written in CBY with up to 18 decimals ("1.5"),
// or in base units with the suffix "wei" ("1500wei"), into base units.
func ParseCBY(s string) (*big.Int, error) {
	s = strings.TrimSpace(s)
	if t, ok := strings.CutSuffix(s, "wei"); ok {
		return ParseAmount(strings.TrimSpace(t))
	}
	s = strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(s, "CBY")), " ")
	v, err := ParseUnits(s, Decimals)
	if err != nil {
		return nil, fmt.Errorf("invalid CBY amount: %w", err)
	}
	return v, nil
}

// ParseUnits parses a non-negative decimal amount with up to decimals
// fractional digits ("1.5") into base units (1.5 × 10^decimals).
func ParseUnits(s string, decimals int) (*big.Int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty amount")
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	if hasFrac && (frac == "" || len(frac) > decimals) {
		return nil, fmt.Errorf("%q: at most %d decimals", s, decimals)
	}
	w, ok := new(big.Int).SetString(whole, 10)
	if !ok || w.Sign() < 0 || strings.HasPrefix(whole, "+") {
		return nil, fmt.Errorf("%q is not a non-negative decimal", s)
	}
	v := new(big.Int).Mul(w, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	if hasFrac {
		f, ok := new(big.Int).SetString(frac+strings.Repeat("0", decimals-len(frac)), 10)
		if !ok || f.Sign() < 0 || strings.ContainsAny(frac, "+-") {
			return nil, fmt.Errorf("%q is not a non-negative decimal", s)
		}
		v.Add(v, f)
	}
	return v, nil
}

// FormatCBY renders base units as CBY with trailing zeros trimmed
// ("1.5 CBY", "0.00001 CBY", "0 CBY").
func FormatCBY(v *big.Int) string { return FormatUnits(v, Decimals) + " CBY" }

// FormatUnits renders base units as a decimal with decimals fractional
// digits, trailing zeros trimmed ("1.5", "0", "-2.25").
func FormatUnits(v *big.Int, decimals int) string {
	neg := v.Sign() < 0
	a := new(big.Int).Abs(v)
	q, r := new(big.Int).QuoRem(a, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil), new(big.Int))
	s := q.String()
	if r.Sign() != 0 {
		frac := fmt.Sprintf("%0*s", decimals, r.String())
		s += "." + strings.TrimRight(frac, "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// MustCBY is ParseCBY for constants; it panics on a malformed literal.
func MustCBY(s string) *big.Int {
	v, err := ParseCBY(s)
	if err != nil {
		panic(err)
	}
	return v
}
