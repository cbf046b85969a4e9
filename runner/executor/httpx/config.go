package httpx

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
)

// Defaults applied by Config.withDefaults to zero fields.
const (
	DefaultMaxResponseBytes = 4 << 20 // 4 MiB per response
	DefaultMaxRedirects     = 5
	DefaultUserAgent        = "cowboy-runner-httpx/1"
	// MaxSources bounds the sources of one job; MaxRules the extraction
	// rules; MaxHeaders the request headers.
	MaxSources = 16
	MaxRules   = 32
	MaxHeaders = 32
	// MaxURLBytes bounds each URL.
	MaxURLBytes = 2048
)

// SetPrefix marks a curated domain set in allowlists and in a job's
// required_domains ("set:price_feeds"), as chain/offchain/entitlement does.
const SetPrefix = "set:"

// Curated domain set names (spec 002 "External Data").
const (
	SetPriceFeeds    = "price_feeds"
	SetGovernmentUS  = "government_us"
	SetSocialAPIs    = "social_apis"
	SetBlockchainRPC = "blockchain_rpc"
)

// DefaultDomainSets returns the built-in members of the curated sets. An
// operator overrides a set by naming it in Config.DomainSets.
func DefaultDomainSets() map[string][]string {
	return map[string][]string{
		SetPriceFeeds: {
			"api.binance.com", "api.bitfinex.com", "api.coinbase.com", "api.coingecko.com",
			"api.exchange.coinbase.com", "api.gemini.com", "api.kraken.com",
			"min-api.cryptocompare.com", "pro-api.coinmarketcap.com", "www.bitstamp.net",
		},
		SetGovernmentUS: {"*.gov", "api.stlouisfed.org"},
		SetSocialAPIs: {
			"api.github.com", "api.telegram.org", "api.twitter.com", "api.x.com", "bsky.social",
			"discord.com", "graph.facebook.com", "mastodon.social", "oauth.reddit.com",
			"public.api.bsky.app", "www.reddit.com",
		},
		SetBlockchainRPC: {
			"*.alchemy.com", "*.infura.io", "api.etherscan.io", "api.mainnet-beta.solana.com",
			"blockstream.info", "cloudflare-eth.com", "eth.llamarpc.com", "mempool.space", "rpc.ankr.com",
		},
	}
}

// Config is the HTTP executor's part of the runner configuration. The zero
// value is usable: any public domain a job declares, 4 MiB responses, five
// redirects, private addresses refused.
type Config struct {
	// AllowedDomains is the runner's allowlist: exact host names ("api.example.com",
	// IP literals), wildcards ("*.example.com": every name below example.com,
	// not example.com itself) and curated sets ("set:price_feeds"). Empty:
	// every domain a job declares (the job's entitlement still applies).
	AllowedDomains []string `toml:"allowed_domains" json:"allowed_domains"`
	// DomainSets overrides or adds curated sets by name; sets not named keep
	// DefaultDomainSets.
	DomainSets map[string][]string `toml:"domain_sets" json:"domain_sets"`
	// AllowPrivate permits loopback, private, link-local and other
	// non-public targets. Only for tests and local demos.
	AllowPrivate bool `toml:"allow_private" json:"allow_private"`
	// MaxResponseBytes caps each response body (after decompression); a job's
	// bounds.max_memory_bytes lowers it further. 0: DefaultMaxResponseBytes.
	MaxResponseBytes int64 `toml:"max_response_bytes" json:"max_response_bytes"`
	// UserAgent is sent unless a job sets its own. "": DefaultUserAgent.
	UserAgent string `toml:"user_agent" json:"user_agent"`
	// MaxRedirects bounds redirects followed per request. 0:
	// DefaultMaxRedirects; negative: none followed.
	MaxRedirects int `toml:"max_redirects" json:"max_redirects"`
}

func (c Config) withDefaults() Config {
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	switch {
	case c.MaxRedirects == 0:
		c.MaxRedirects = DefaultMaxRedirects
	case c.MaxRedirects < 0:
		c.MaxRedirects = 0
	}
	sets := DefaultDomainSets()
	for name, members := range c.DomainSets {
		sets[name] = members
	}
	c.DomainSets = sets
	return c
}

// pattern is one normalised domain pattern: an exact host, or a suffix
// (wildcard "*.suffix" stored as ".suffix").
type pattern struct {
	host   string
	suffix string
}

func (p pattern) matches(host string) bool {
	if p.suffix != "" {
		return len(host) > len(p.suffix) && strings.HasSuffix(host, p.suffix) && net.ParseIP(host) == nil
	}
	return p.host == host
}

// patternSet is a list of patterns; nil with any=true admits every host.
type patternSet struct {
	any      bool
	patterns []pattern
}

func (s patternSet) matches(host string) bool {
	if s.any {
		return true
	}
	for _, p := range s.patterns {
		if p.matches(host) {
			return true
		}
	}
	return false
}

// errUnknownSet: a "set:NAME" entry names no configured set.
var errUnknownSet = errors.New("unknown domain set")

// compilePatterns expands curated sets and normalises entries. unknownSet
// reports a set name that sets does not define.
func compilePatterns(entries []string, sets map[string][]string) (patternSet, error) {
	var out patternSet
	for _, e := range entries {
		if name, ok := strings.CutPrefix(e, SetPrefix); ok {
			members, ok := sets[name]
			if !ok {
				return patternSet{}, fmt.Errorf("%w %q", errUnknownSet, name)
			}
			for _, m := range members {
				p, err := parsePattern(m)
				if err != nil {
					return patternSet{}, fmt.Errorf("domain set %q: %w", name, err)
				}
				out.patterns = append(out.patterns, p)
			}
			continue
		}
		p, err := parsePattern(e)
		if err != nil {
			return patternSet{}, err
		}
		out.patterns = append(out.patterns, p)
	}
	return out, nil
}

func parsePattern(s string) (pattern, error) {
	if suffix, ok := strings.CutPrefix(s, "*."); ok {
		h := normalizeHost(suffix)
		if h == "" || strings.Contains(h, "*") {
			return pattern{}, fmt.Errorf("domain pattern %q: want *.name", s)
		}
		return pattern{suffix: "." + h}, nil
	}
	h := normalizeHost(s)
	if h == "" || strings.ContainsAny(h, "*/:@ ") && net.ParseIP(h) == nil {
		return pattern{}, fmt.Errorf("domain pattern %q: want a host name, *.name or %sNAME", s, SetPrefix)
	}
	return pattern{host: h}, nil
}

// normalizeHost lower-cases a host, drops a trailing dot and IPv6 brackets,
// and renders IP literals in their canonical form.
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), "."))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return h
}

// Domains is what the runner can advertise in its registration (the
// Satisfies matcher of chain/offchain/entitlement): with an explicit
// allowlist, its entries plus the members of the curated sets it includes;
// with the default (any domain), every curated set name and member. The list
// is sorted and unique; the daemon may add names it serves beyond these.
func (c Config) Domains() []string {
	c = c.withDefaults()
	var out []string
	add := func(name string) {
		out = append(out, SetPrefix+name)
		out = append(out, c.DomainSets[name]...)
	}
	if len(c.AllowedDomains) == 0 {
		for name := range c.DomainSets {
			add(name)
		}
	}
	for _, e := range c.AllowedDomains {
		if name, ok := strings.CutPrefix(e, SetPrefix); ok {
			add(name)
			continue
		}
		out = append(out, e)
	}
	for i := range out {
		if !strings.HasPrefix(out[i], SetPrefix) {
			if w, ok := strings.CutPrefix(out[i], "*."); ok {
				out[i] = "*." + normalizeHost(w)
			} else {
				out[i] = normalizeHost(out[i])
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
