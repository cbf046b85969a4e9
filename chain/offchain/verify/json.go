package verify

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec/jsoncanon"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Limits on JSON documents the chain inspects (results and schemas); they
// are the canonical-JSON package's.
const (
	MaxJSONDepth       = jsoncanon.MaxDepth
	MaxJSONNumberBytes = jsoncanon.MaxNumberBytes
	MaxJSONExponent    = jsoncanon.MaxExponent
)

func parseJSON(b []byte) (any, error)        { return jsoncanon.Parse(b) }
func lookup(doc any, ptr string) (any, bool) { return jsoncanon.Lookup(doc, ptr) }
func canonical(v any) string                 { return jsoncanon.EqualityKey(v) }

// schemaURL is the in-memory location every job schema is compiled under.
const schemaURL = "cowboy:///result-schema.json"

// compileSchema compiles a JSON Schema document. Remote and file references
// are refused (the loader knows no scheme), format and content keywords are
// annotations only (the 2020-12 default), and the default draft is pinned to
// 2020-12 so a library upgrade cannot change verdicts of schemas without
// "$schema". Numbers are compared by the library as big.Rat; pattern uses
// Go's RE2 regexp (linear time).
func compileSchema(schema []byte) (*jsonschema.Schema, error) {
	doc, err := parseJSON(schema) // json.Number values, bounded like results
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}
