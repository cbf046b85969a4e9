package httpx

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"
	"github.com/ohler55/ojg/jp"
	"golang.org/x/net/html"

	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// maxMatches bounds the matches one rule collects with All.
const maxMatches = 1000

// document is one response body, parsed lazily as JSON and/or HTML so a job
// mixing rule kinds parses each form once.
type document struct {
	body []byte

	jsonDone  bool
	jsonVal   any // exact numbers (json.Number)
	jsonFloat any // same tree with float64/int64 numbers, for JSONPath filters
	jsonErr   error

	htmlDone bool
	htmlRoot *html.Node
	htmlErr  error
}

func (d *document) json() (any, error) {
	if !d.jsonDone {
		d.jsonDone = true
		// encoding/json would turn bad bytes and lone surrogates into
		// U+FFFD: such a body is not JSON a result may be built from.
		if d.jsonErr = executor.CheckText(d.body); d.jsonErr == nil {
			d.jsonVal, d.jsonErr = decodeJSON(d.body)
		}
		if d.jsonErr != nil {
			d.jsonErr = fmt.Errorf("response is not JSON: %w", d.jsonErr)
		}
	}
	return d.jsonVal, d.jsonErr
}

func (d *document) html() (*html.Node, error) {
	if !d.htmlDone {
		d.htmlDone = true
		d.htmlRoot, d.htmlErr = html.Parse(bytes.NewReader(d.body))
		if d.htmlErr != nil {
			d.htmlErr = fmt.Errorf("response is not HTML: %w", d.htmlErr)
		}
	}
	return d.htmlRoot, d.htmlErr
}

// extract applies the plan's rules to one body: the single value of an
// unnamed rule, or an object of named fields. Without rules the value is the
// whole body: its JSON value if it parses, else its text.
func (p *plan) extract(d *document) (any, error) {
	if len(p.rules) == 0 {
		if v, err := d.json(); err == nil {
			return v, nil
		}
		return string(d.body), nil
	}
	var obj map[string]any
	if p.named {
		obj = make(map[string]any, len(p.rules))
	}
	for i := range p.rules {
		r := &p.rules[i]
		v, err := r.apply(d)
		if err != nil {
			label := r.Name
			if label == "" {
				label = fmt.Sprintf("extract[%d]", i)
			}
			return nil, fmt.Errorf("%s (%s %q): %w", label, r.Kind, r.Query, err)
		}
		if !p.named {
			return v, nil
		}
		obj[r.Name] = v
	}
	return obj, nil
}

var errNoMatch = errors.New("no match")

func (r *compiledRule) apply(d *document) (any, error) {
	var vals []any
	var err error
	switch r.Kind {
	case KindJSONPath:
		vals, err = r.jsonPath(d)
	case KindCSS:
		vals, err = r.cssSelect(d)
	case KindXPath:
		vals, err = r.xpathSelect(d)
	case KindRegex:
		vals = r.regex(d)
	}
	if err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		if r.Optional {
			return nil, nil
		}
		return nil, errNoMatch
	}
	for i, v := range vals {
		if vals[i], err = convert(v, r.As); err != nil {
			return nil, err
		}
	}
	if r.All {
		return vals, nil
	}
	return vals[0], nil
}

// jsonPath locates matches (for filter expressions on a copy of the
// document whose numbers are float64/int64, which ojg's filters compare),
// orders the located paths (object keys bytewise, array indexes numerically:
// map iteration order must not leak into results), and reads the values from
// the exact tree.
func (r *compiledRule) jsonPath(d *document) ([]any, error) {
	exact, err := d.json()
	if err != nil {
		return nil, err
	}
	if len(r.jp) == 1 { // "$" or "@" alone: Locate reports no path for the root itself
		switch r.jp[0].(type) {
		case jp.Root, jp.At:
			return []any{exact}, nil
		}
	}
	tree := exact
	if strings.Contains(r.Query, "?") { // only filters compare numbers
		if d.jsonFloat == nil {
			d.jsonFloat = floatTree(exact)
		}
		tree = d.jsonFloat
	}
	// All matches, then order, then cut: ojg visits objects in map order, so
	// a cut before sorting could keep different matches on different runs.
	locs := r.jp.Locate(tree, 0)
	slices.SortFunc(locs, cmpPath)
	locs = locs[:min(len(locs), maxMatches)]
	var out []any
	for _, loc := range locs {
		if v := loc.Get(exact); len(v) > 0 {
			out = append(out, v[0])
		}
		if !r.All && len(out) > 0 {
			break
		}
	}
	return out, nil
}

func cmpPath(a, b jp.Expr) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := cmpFrag(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func cmpFrag(a, b jp.Frag) int {
	switch x := a.(type) {
	case jp.Nth:
		if y, ok := b.(jp.Nth); ok {
			return cmp.Compare(x, y)
		}
		return -1
	case jp.Child:
		if y, ok := b.(jp.Child); ok {
			return strings.Compare(string(x), string(y))
		}
		return 1
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// floatTree copies v with json.Number replaced by int64 or float64.
func floatTree(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) {
			return string(x)
		}
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = floatTree(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = floatTree(e)
		}
		return out
	}
	return v
}

func (r *compiledRule) cssSelect(d *document) ([]any, error) {
	root, err := d.html()
	if err != nil {
		return nil, err
	}
	var out []any
	goquery.NewDocumentFromNode(root).FindMatcher(r.css).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if r.Attr != "" {
			v, ok := s.Attr(r.Attr)
			if !ok {
				return true
			}
			out = append(out, strings.TrimSpace(v))
		} else {
			out = append(out, collapseSpace(s.Text()))
		}
		return r.All && len(out) < maxMatches
	})
	return out, nil
}

func (r *compiledRule) xpathSelect(d *document) ([]any, error) {
	root, err := d.html()
	if err != nil {
		return nil, err
	}
	// A compiled xpath.Expr keeps evaluation state, so each use compiles
	// its own (parseInput already proved the expression compiles).
	expr, err := xpath.Compile(r.Query)
	if err != nil {
		return nil, err
	}
	switch v := expr.Evaluate(htmlquery.CreateXPathNavigator(root)).(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil
		}
		return []any{json.Number(strconv.FormatFloat(v, 'f', -1, 64))}, nil
	case string:
		return []any{collapseSpace(v)}, nil
	case bool:
		return []any{v}, nil
	case *xpath.NodeIterator:
		var out []any
		for v.MoveNext() {
			nav, ok := v.Current().(*htmlquery.NodeNavigator)
			if !ok {
				continue
			}
			if r.Attr != "" {
				n := nav.Current()
				if !htmlquery.ExistsAttr(n, r.Attr) {
					continue
				}
				out = append(out, strings.TrimSpace(htmlquery.SelectAttr(n, r.Attr)))
			} else {
				out = append(out, collapseSpace(nav.Value()))
			}
			if !r.All || len(out) >= maxMatches {
				break
			}
		}
		return out, nil
	}
	return nil, nil
}

func (r *compiledRule) regex(d *document) []any {
	n := 1
	if r.All {
		n = maxMatches
	}
	var out []any
	for _, m := range r.re.FindAllSubmatchIndex(d.body, n) {
		lo, hi := m[2*r.group], m[2*r.group+1]
		if lo < 0 {
			continue // the group did not take part in this match
		}
		// Bytes as matched: a binary result carries them faithfully, a
		// text or JSON result refuses them if they are not UTF-8.
		out = append(out, string(d.body[lo:hi]))
	}
	return out
}

// convert applies a rule's "as".
func convert(v any, as string) (any, error) {
	switch as {
	case "number":
		if _, ok := v.(bool); ok {
			return nil, errors.New("boolean is not a number")
		}
		r, err := numberOf(v)
		if err != nil {
			return nil, err
		}
		s, err := decimalString(r)
		if err != nil {
			return nil, err
		}
		return json.Number(s), nil
	case "string":
		switch x := v.(type) {
		case json.Number:
			return string(x), nil
		case bool:
			return strconv.FormatBool(x), nil
		case string:
			return x, nil
		case nil:
			return nil, errors.New("null is not a string")
		}
		b, err := canonicalJSON(v)
		return string(b), err
	}
	return v, nil
}

// collapseSpace trims s and replaces each run of white space with one space,
// so text extracted from differently formatted copies of a page agrees.
// Bytes that are not UTF-8 are kept as they are (see encode).
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
