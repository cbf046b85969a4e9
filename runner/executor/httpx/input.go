package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/xpath"
	"github.com/ohler55/ojg/jp"
)

// Input is the JSON job input of an HTTP job (JobSpec.Input). A job input
// that is not a JSON object is taken as a single URL to GET.
//
//	{
//	  "url": "https://api.example.com/v1/price",     // or "sources": [url, …]
//	  "method": "GET",                               // GET (default) or POST
//	  "headers": {"Accept": "application/json"},
//	  "body": "…",                                   // POST body (string)
//	  "extract": [{"kind": "jsonpath", "query": "$.price", "name": "price", "as": "number"}],
//	  "snapshot": "median",                          // first_valid (default), median, majority, latest
//	  "field": "price",                              // which extracted field median/majority/latest use
//	  "max_age_seconds": 60,
//	  "timestamp_field": "ts",                       // freshness from an extracted field
//	  "min_valid": 2                                 // sources that must succeed (default 1)
//	}
type Input struct {
	URL            string            `json:"url,omitempty"`
	Sources        []string          `json:"sources,omitempty"`
	Method         string            `json:"method,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Body           string            `json:"body,omitempty"`
	Extract        []Rule            `json:"extract,omitempty"`
	Snapshot       string            `json:"snapshot,omitempty"`
	Field          string            `json:"field,omitempty"`
	MaxAgeSeconds  int64             `json:"max_age_seconds,omitempty"`
	TimestampField string            `json:"timestamp_field,omitempty"`
	// MinValid is how many sources must succeed (default 1).
	MinValid int `json:"min_valid,omitempty"`
}

// Rule is one extraction rule.
type Rule struct {
	// Kind is jsonpath, css, xpath or regex.
	Kind string `json:"kind"`
	// Query is the JSONPath expression, CSS selector, XPath expression or
	// RE2 pattern.
	Query string `json:"query"`
	// Name is the output field; required when there is more than one rule.
	Name string `json:"name,omitempty"`
	// Attr (css, xpath) takes an attribute instead of the element text.
	Attr string `json:"attr,omitempty"`
	// Group (regex) is the capture group taken: default 1 when the pattern
	// has groups, else 0 (the whole match).
	Group *int `json:"group,omitempty"`
	// All returns every match as an array instead of the first.
	All bool `json:"all,omitempty"`
	// As converts values: "" keeps them (JSON values for jsonpath, strings
	// otherwise), "string" renders JSON scalars as strings, "number" parses
	// numbers ("$1,234.50" → 1234.5).
	As string `json:"as,omitempty"`
	// Optional yields null instead of failing when nothing matches.
	Optional bool `json:"optional,omitempty"`
}

// Snapshot modes (spec 002 "External Data").
const (
	SnapshotFirstValid = "first_valid"
	SnapshotMedian     = "median"
	SnapshotMajority   = "majority"
	SnapshotLatest     = "latest"
)

// Rule kinds.
const (
	KindJSONPath = "jsonpath"
	KindCSS      = "css"
	KindXPath    = "xpath"
	KindRegex    = "regex"
)

// plan is a parsed, validated Input ready to run.
type plan struct {
	sources  []*url.URL
	method   string
	headers  http.Header
	body     []byte
	rules    []compiledRule
	named    bool // output is an object of named fields
	snapshot string
	field    string
	maxAge   int64
	tsField  string
	minValid int
}

type compiledRule struct {
	Rule
	jp    jp.Expr
	css   cascadia.Selector
	re    *regexp.Regexp
	group int
}

var errInput = errors.New("input")

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInput, fmt.Sprintf(format, args...))
}

// ValidateInput reports whether raw is a well-formed HTTP job input, with
// the first problem found, so a caller (a daemon screening assignments, a
// CLI building a job) can reject it before any request is made.
func ValidateInput(raw []byte) error {
	_, err := parseInput(raw)
	return err
}

// parseInput parses and validates a job input.
func parseInput(raw []byte) (*plan, error) {
	var in Input
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, bad("empty input: want a URL or a JSON object")
	}
	if !utf8.Valid(trimmed) {
		return nil, bad("input is not UTF-8")
	}
	if trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, bad("input JSON: %v", err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, bad("input JSON: trailing data after the object")
		}
	} else {
		in.URL = string(trimmed)
	}
	return in.compile()
}

func (in Input) compile() (*plan, error) {
	p := &plan{snapshot: SnapshotFirstValid, maxAge: in.MaxAgeSeconds, field: in.Field, tsField: in.TimestampField}
	urls := in.Sources
	switch {
	case in.URL != "" && len(in.Sources) > 0:
		return nil, bad("give url or sources, not both")
	case in.URL != "":
		urls = []string{in.URL}
	case len(urls) == 0:
		return nil, bad("no url or sources")
	}
	if len(urls) > MaxSources {
		return nil, bad("%d sources, limit %d", len(urls), MaxSources)
	}
	for i, s := range urls {
		u, err := parseURL(s)
		if err != nil {
			return nil, bad("sources[%d]: %v", i, err)
		}
		p.sources = append(p.sources, u)
	}
	switch m := strings.ToUpper(in.Method); m {
	case "", http.MethodGet:
		p.method = http.MethodGet
		if in.Body != "" {
			return nil, bad("body is only allowed with POST")
		}
	case http.MethodPost:
		p.method = http.MethodPost
		p.body = []byte(in.Body)
	default:
		return nil, bad("method %q: want GET or POST", in.Method)
	}
	if len(in.Headers) > MaxHeaders {
		return nil, bad("%d headers, limit %d", len(in.Headers), MaxHeaders)
	}
	p.headers = make(http.Header, len(in.Headers))
	for k, v := range in.Headers {
		if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
			return nil, bad("header %q: invalid name or value", k)
		}
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer", "Proxy-Authorization", "Proxy-Connection",
			"Accept-Encoding": // the transport negotiates compression so that size caps apply to decoded bytes
			return nil, bad("header %q may not be set by a job", k)
		}
		p.headers.Set(k, v)
	}
	if err := p.compileRules(in.Extract); err != nil {
		return nil, err
	}
	switch in.Snapshot {
	case "":
	case SnapshotFirstValid, SnapshotMedian, SnapshotMajority, SnapshotLatest:
		p.snapshot = in.Snapshot
	default:
		return nil, bad("snapshot %q: want first_valid, median, majority or latest", in.Snapshot)
	}
	if p.field != "" && !p.named {
		return nil, bad("field %q needs named extraction rules", p.field)
	}
	if p.named && p.field == "" && (p.snapshot == SnapshotMedian) {
		return nil, bad("snapshot median over named fields needs field")
	}
	if p.field != "" && !p.hasName(p.field) {
		return nil, bad("field %q is not the name of an extraction rule", p.field)
	}
	if p.tsField != "" && !p.hasName(p.tsField) {
		return nil, bad("timestamp_field %q is not the name of an extraction rule", p.tsField)
	}
	if p.maxAge < 0 {
		return nil, bad("max_age_seconds must be >= 0")
	}
	p.minValid = max(1, in.MinValid)
	if in.MinValid < 0 || p.minValid > len(p.sources) {
		return nil, bad("min_valid %d: want 1..%d (the number of sources)", in.MinValid, len(p.sources))
	}
	return p, nil
}

func (p *plan) hasName(n string) bool {
	return slices.ContainsFunc(p.rules, func(r compiledRule) bool { return r.Name == n })
}

func parseURL(s string) (*url.URL, error) {
	if len(s) > MaxURLBytes {
		return nil, fmt.Errorf("url longer than %d bytes", MaxURLBytes)
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: scheme must be http or https", s)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("url %q: no host", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q: credentials in URLs are not allowed", s)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

func (p *plan) compileRules(rules []Rule) error {
	if len(rules) > MaxRules {
		return bad("%d extraction rules, limit %d", len(rules), MaxRules)
	}
	names := map[string]bool{}
	for i, r := range rules {
		c := compiledRule{Rule: r}
		if r.Query == "" {
			return bad("extract[%d]: empty query", i)
		}
		switch r.As {
		case "", "string", "number":
		default:
			return bad("extract[%d]: as %q: want string or number", i, r.As)
		}
		if r.Attr != "" && r.Kind != KindCSS && r.Kind != KindXPath {
			return bad("extract[%d]: attr only applies to css and xpath", i)
		}
		if r.Group != nil && r.Kind != KindRegex {
			return bad("extract[%d]: group only applies to regex", i)
		}
		var err error
		switch r.Kind {
		case KindJSONPath:
			c.jp, err = jp.ParseString(r.Query)
		case KindCSS:
			c.css, err = cascadia.Compile(r.Query)
		case KindXPath:
			_, err = xpath.Compile(r.Query)
		case KindRegex:
			if c.re, err = regexp.Compile(r.Query); err == nil {
				c.group = min(1, c.re.NumSubexp())
				if r.Group != nil {
					c.group = *r.Group
				}
				if c.group < 0 || c.group > c.re.NumSubexp() {
					err = fmt.Errorf("group %d: pattern has %d groups", c.group, c.re.NumSubexp())
				}
			}
		default:
			return bad("extract[%d]: kind %q: want jsonpath, css, xpath or regex", i, r.Kind)
		}
		if err != nil {
			return bad("extract[%d] (%s): %v", i, r.Kind, err)
		}
		if len(rules) > 1 && r.Name == "" {
			return bad("extract[%d]: name is required when there are several rules", i)
		}
		if r.Name != "" {
			if names[r.Name] {
				return bad("extract[%d]: duplicate name %q", i, r.Name)
			}
			names[r.Name] = true
			p.named = true
		}
		p.rules = append(p.rules, c)
	}
	return nil
}
