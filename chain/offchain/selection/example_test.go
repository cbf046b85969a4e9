package selection_test

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The CLI entry point: candidates in any order, stakes as decimal strings of
// base units (10,000 CBY = 10^22).
func ExampleSelectFromJSON() {
	seed := selection.Seed(types.Keccak256([]byte("block")), types.Keccak256([]byte("job")), 42)
	candidates := []byte(`[
		{"address": "0x3333333333333333333333333333333333333333", "stake": "10000000000000000000000"},
		{"address": "0x1111111111111111111111111111111111111111", "stake": "10240000000000000000000000"},
		{"address": "0x2222222222222222222222222222222222222222", "stake": "30000000000000000000000"}
	]`)
	picked, err := selection.SelectFromJSON(seed, 2, candidates)
	if err != nil {
		panic(err)
	}
	for _, a := range picked {
		fmt.Println(a)
	}
	fmt.Println(selection.Weight(nil), selection.Weight(selection.MinStake()))
	// Output:
	// 0x2222222222222222222222222222222222222222
	// 0x1111111111111111111111111111111111111111
	// 1 2
}
