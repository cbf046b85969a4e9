package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/codec/jsoncanon"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// decodeJSON decodes one JSON document as the Result Verifier reads results
// (exact json.Number text, bounded depth and numbers): a body the chain could
// not read as a result is not one to build a result from.
func decodeJSON(b []byte) (any, error) { return verify.ParseJSON(b) }

// canonicalJSON renders v in the runner's canonical JSON form
// (chain/codec/jsoncanon: keys sorted, no insignificant white space,
// numbers in their shortest exact form), the bytes every executor commits, so
// committee members fetching the same data sign the same result.
func canonicalJSON(v any) ([]byte, error) {
	// encoding/json (under jsoncanon.Marshal) would write bytes that are
	// not UTF-8 as U+FFFD; JSON cannot carry them, so refuse.
	if err := validStrings(v); err != nil {
		return nil, fmt.Errorf("%w: %w", executor.ErrUpstream, err)
	}
	b, err := jsoncanon.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: canonical JSON: %w", executor.ErrUpstream, err)
	}
	return b, nil
}

// validStrings reports a string or object key in v that is not UTF-8.
func validStrings(v any) error {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return fmt.Errorf("%w: extracted value %q", executor.ErrNotUTF8, truncate(x))
		}
	case []any:
		for _, e := range x {
			if err := validStrings(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if err := validStrings(k); err != nil {
				return err
			}
			if err := validStrings(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Numbers: parsed values are exact rationals; exponents are bounded so that
// a hostile page cannot make big.Rat arithmetic expensive.
const maxExponent = 400

var numberToken = regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?`)

// parseNumberText finds the single number in s ("$1,234.50", "12 USD",
// "-0.5", "3e2"), ignoring digit-free decoration around it. Thousands
// separators are commas; the decimal point is a dot.
func parseNumberText(s string) (*big.Rat, error) {
	toks := numberToken.FindAllString(s, 2)
	switch len(toks) {
	case 0:
		return nil, fmt.Errorf("no number in %q", truncate(s))
	case 2:
		return nil, fmt.Errorf("more than one number in %q", truncate(s))
	}
	return parseDecimal(strings.ReplaceAll(toks[0], ",", ""))
}

// parseDecimal parses a JSON-style number (optional sign, digits, fraction,
// exponent within ±maxExponent) exactly.
func parseDecimal(s string) (*big.Rat, error) {
	if len(s) > 200 {
		return nil, fmt.Errorf("number %q is longer than 200 bytes", truncate(s))
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil, fmt.Errorf("number %q: exponent beyond ±%d", truncate(s), maxExponent)
		}
	}
	if strings.ContainsAny(s, "xXpP/_") { // big.Rat accepts hex and fractions; numbers here are decimal
		return nil, fmt.Errorf("%q is not a decimal number", truncate(s))
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a number", truncate(s))
	}
	return r, nil
}

// numberOf returns v as an exact number: JSON numbers directly, strings by
// parseNumberText.
func numberOf(v any) (*big.Rat, error) {
	switch x := v.(type) {
	case json.Number:
		return parseDecimal(string(x))
	case string:
		return parseNumberText(x)
	case nil:
		return nil, errors.New("value is null")
	}
	return nil, fmt.Errorf("value of type %s is not a number", jsonType(v))
}

// decimalString renders r as a plain JSON number with no exponent and no
// trailing fractional zeros. r must have a terminating decimal expansion
// (true of every value parsed from decimals and of medians, which halve a
// sum).
func decimalString(r *big.Rat) (string, error) {
	den := new(big.Int).Set(r.Denom())
	var twos, fives int
	two, five := big.NewInt(2), big.NewInt(5)
	var m big.Int
	for m.Mod(den, two).Sign() == 0 {
		den.Quo(den, two)
		twos++
	}
	for m.Mod(den, five).Sign() == 0 {
		den.Quo(den, five)
		fives++
	}
	if den.Cmp(big.NewInt(1)) != 0 {
		return "", fmt.Errorf("%s has no finite decimal form", r.RatString())
	}
	return r.FloatString(max(twos, fives)), nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
