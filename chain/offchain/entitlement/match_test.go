package entitlement

import "testing"

func TestSatisfies(t *testing.T) {
	tests := []struct {
		name               string
		requires, provides []string
		want               bool
	}{
		{"empty requirement", nil, nil, true},
		{"exact", []string{"api.x.com"}, []string{"api.x.com"}, true},
		{"missing", []string{"api.x.com"}, []string{"api.y.com"}, false},
		{"wildcard covers subdomain", []string{"api.x.com"}, []string{"*.x.com"}, true},
		{"wildcard covers deep subdomain", []string{"a.b.x.com"}, []string{"*.x.com"}, true},
		{"wildcard does not cover apex", []string{"x.com"}, []string{"*.x.com"}, false},
		{"wildcard does not cover lookalike", []string{"evilx.com"}, []string{"*.x.com"}, false},
		{"required wildcard needs equal wildcard", []string{"*.x.com"}, []string{"*.x.com"}, true},
		{"narrow provider cannot serve a wildcard", []string{"*.x.com"}, []string{"a.x.com"}, false},
		{"wider wildcard does not cover required wildcard", []string{"*.a.x.com"}, []string{"*.x.com"}, false},
		{"set names", []string{"set:price_feeds"}, []string{"set:price_feeds", "a.com"}, true},
		{"all required", []string{"a.com", "b.com"}, []string{"a.com"}, false},
		{"bare star is not a wildcard", []string{"a.com"}, []string{"*."}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Satisfies(tc.requires, tc.provides); got != tc.want {
				t.Fatalf("Satisfies(%v, %v) = %v", tc.requires, tc.provides, got)
			}
		})
	}
}
