package entitlement

import "strings"

// Satisfies is the requires ⊆ provides matcher used for actors' declared HTTP
// domains against runners' advertised domains (spec 002 "External Data") and
// for any other capability list. Every required entry must be covered by
// some provided entry, where a provided entry covers a required one when
//
//   - they are byte-equal (this includes curated set names such as
//     "set:price_feeds" and wildcards required verbatim), or
//   - the provided entry is "*.suffix" and the required entry is a plain name
//     ending in ".suffix" with at least one more label (so "*.example.com"
//     covers "api.example.com" and "a.b.example.com" but not "example.com").
//
// Matching is ASCII case-sensitive; callers lower-case domain names first.
// An empty requirement is always satisfied.
func Satisfies(requires, provides []string) bool {
	for _, r := range requires {
		if !covered(r, provides) {
			return false
		}
	}
	return true
}

func covered(r string, provides []string) bool {
	for _, p := range provides {
		if p == r {
			return true
		}
		if suffix, ok := strings.CutPrefix(p, "*."); ok && suffix != "" &&
			!strings.HasPrefix(r, "*.") && strings.HasSuffix(r, "."+suffix) && len(r) > len(suffix)+1 {
			return true
		}
	}
	return false
}
