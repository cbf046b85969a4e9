package entitlement

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
)

// Actor entitlements (spec 002 §15): an actor's deployment manifest lists
// the privileged host calls it requires; an actor deployed without one gets
// none of them (least privilege). Each entry names an Action of §7.1 —
// the spec's enum has no timer or network variant, so those two use its
// extension point, Custom — with parameters narrowing it:
//
//	timers  Custom("timers")    runtime.set_timer / set_interval (no parameters)
//	jobs    RunnerSubmitJob     runtime.submit_job of the listed job types (llm, http, mcp, custom)
//	http    Custom("http")      the domains a submitted job may require (required_domains):
//	                            names, "*.suffix" wildcards and "set:NAME" curated sets
//
// The manifest is consensus state: it is written once at deploy time and
// never changes, so every node gates the same calls the same way.

// Entitlement names of the manifest.
const (
	NameTimers = "timers"
	NameJobs   = "jobs"
	NameHTTP   = "http"
	NameEth    = "eth"
)

// Manifest limits.
const (
	MaxManifestBytes  = 4096 // encoded manifest
	MaxRequirementArg = 64   // parameters per requirement
	MaxParamBytes     = 253  // bytes per parameter (a DNS name)
)

// TimersAction, JobsAction and HTTPAction are the Actions a manifest entry
// may name.
func TimersAction() Action { return Action{Kind: ActionCustom, Data: []byte(NameTimers)} }

// JobsAction is Action::RunnerSubmitJob.
func JobsAction() Action { return Action{Kind: ActionRunnerSubmitJob} }

// HTTPAction is Action::Custom("http").
func HTTPAction() Action { return Action{Kind: ActionCustom, Data: []byte(NameHTTP)} }

// EthAction is Action::Custom("eth"): Ethereum event subscriptions
// (spec 002 §16.4; chain/system/ethbridge). Its parameters are
// "CHAINID:0xCONTRACT:0xTOPIC0" (lower-case hex; TOPIC0 may be "*" for
// every event of the contract).
func EthAction() Action { return Action{Kind: ActionCustom, Data: []byte(NameEth)} }

// entitlementName maps an Action to its manifest name ("" if it is not an
// actor entitlement).
func entitlementName(a Action) string {
	switch {
	case a.Equal(TimersAction()):
		return NameTimers
	case a.Equal(JobsAction()):
		return NameJobs
	case a.Equal(HTTPAction()):
		return NameHTTP
	case a.Equal(EthAction()):
		return NameEth
	}
	return ""
}

func actionByName(name string) (Action, bool) {
	switch name {
	case NameTimers:
		return TimersAction(), true
	case NameJobs:
		return JobsAction(), true
	case NameHTTP:
		return HTTPAction(), true
	case NameEth:
		return EthAction(), true
	}
	return Action{}, false
}

// Requirement is one manifest entry. Encoding: [action, [params…], inheritable].
type Requirement struct {
	_           struct{} `cbor:",toarray"`
	Action      Action
	Params      []string // sorted, unique
	Inheritable bool     // passed on to child actors (§15.3)
}

// Name is the requirement's manifest name (timers, jobs or http).
func (r Requirement) Name() string { return entitlementName(r.Action) }

// Validate checks the entry's shape.
func (r Requirement) Validate() error {
	name := r.Name()
	if name == "" {
		return fmt.Errorf("action %s is not an actor entitlement (want %s, %s, %s or %s)", r.Action, NameTimers, NameJobs, NameHTTP, NameEth)
	}
	if len(r.Params) > MaxRequirementArg {
		return fmt.Errorf("%s: %d parameters, limit %d", name, len(r.Params), MaxRequirementArg)
	}
	for i, p := range r.Params {
		if i > 0 && r.Params[i-1] >= p {
			return fmt.Errorf("%s: parameters must be sorted and unique", name)
		}
	}
	switch name {
	case NameTimers:
		if len(r.Params) != 0 {
			return errors.New("timers takes no parameters")
		}
	case NameJobs:
		if len(r.Params) == 0 {
			return errors.New("jobs needs the job types it may submit (llm, http, mcp, custom)")
		}
		for _, p := range r.Params {
			if _, ok := parseJobType(p); !ok {
				return fmt.Errorf("jobs: unknown job type %q (want llm, http, mcp or custom)", p)
			}
		}
	case NameHTTP:
		if len(r.Params) == 0 {
			return errors.New("http needs the domains jobs may require")
		}
		for _, p := range r.Params {
			if err := validDomain(p); err != nil {
				return fmt.Errorf("http: %w", err)
			}
		}
	case NameEth:
		if len(r.Params) == 0 {
			return errors.New("eth needs the Ethereum events it may subscribe to (CHAINID:0xCONTRACT:0xTOPIC0 or CHAINID:0xCONTRACT:*)")
		}
		for _, p := range r.Params {
			if err := validEthEvent(p); err != nil {
				return fmt.Errorf("eth: %w", err)
			}
		}
	}
	return nil
}

func parseJobType(s string) (job.JobType, bool) {
	for t := job.JobTypeLLM; t <= job.JobTypeCustom; t++ {
		if t.String() == s {
			return t, true
		}
	}
	return 0, false
}

// validDomain accepts lower-case DNS names, "*.suffix" wildcards and
// "set:NAME" curated sets — the forms runners advertise.
func validDomain(d string) error {
	if d == "" || len(d) > MaxParamBytes {
		return fmt.Errorf("domain %q must be 1..%d bytes", d, MaxParamBytes)
	}
	body := d
	if name, ok := strings.CutPrefix(d, "set:"); ok {
		body = name
	} else if suffix, ok := strings.CutPrefix(d, "*."); ok {
		body = suffix
	}
	if body == "" {
		return fmt.Errorf("domain %q is empty after its prefix", d)
	}
	for _, c := range body {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Errorf("domain %q: only lower-case letters, digits, '-', '_' and '.' (after an optional \"*.\" or \"set:\")", d)
		}
	}
	return nil
}

// Manifest is an actor's list of required entitlements, one entry per
// entitlement, ordered by their canonical action bytes (jobs, http, timers).
type Manifest []Requirement

// Find returns the entry for name.
func (m Manifest) Find(name string) (Requirement, bool) {
	for _, r := range m {
		if r.Name() == name {
			return r, true
		}
	}
	return Requirement{}, false
}

func actionBytes(a Action) []byte {
	b, err := codec.Marshal(a)
	if err != nil {
		return nil
	}
	return b
}

// Normalize sorts the entries and their parameters and validates the
// result; it refuses duplicate entries.
func (m Manifest) Normalize() (Manifest, error) {
	out := make(Manifest, 0, len(m))
	for _, r := range m {
		params := slices.Clone(r.Params)
		slices.Sort(params)
		params = slices.Compact(params)
		out = append(out, Requirement{Action: r.Action, Params: params, Inheritable: r.Inheritable})
	}
	slices.SortFunc(out, func(a, b Requirement) int { return bytes.Compare(actionBytes(a.Action), actionBytes(b.Action)) })
	return out, out.Validate()
}

// Validate checks every entry, their order and uniqueness.
func (m Manifest) Validate() error {
	var prev []byte
	for i, r := range m {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("manifest: %w", err)
		}
		cur := actionBytes(r.Action)
		if i > 0 {
			switch c := bytes.Compare(prev, cur); {
			case c == 0:
				return fmt.Errorf("manifest: %s declared twice", r.Name())
			case c > 0:
				return errors.New("manifest: entries must be in canonical order (by action encoding: jobs, http, timers)")
			}
		}
		prev = cur
	}
	return nil
}

// Encode returns the canonical encoding of a valid, non-empty manifest.
func (m Manifest) Encode() ([]byte, error) {
	if len(m) == 0 {
		return nil, errors.New("manifest: empty (omit it instead)")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	// Parameters are always an array (never null): one encoding per manifest.
	arr := make([]Requirement, len(m))
	for i, r := range m {
		arr[i] = Requirement{Action: r.Action, Params: r.Params, Inheritable: r.Inheritable}
		if arr[i].Params == nil {
			arr[i].Params = []string{}
		}
	}
	b, err := codec.Marshal(arr)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if len(b) > MaxManifestBytes {
		return nil, fmt.Errorf("manifest: %d bytes, limit %d", len(b), MaxManifestBytes)
	}
	return b, nil
}

// DecodeManifest decodes and validates a canonical manifest (as carried by
// Deploy and stored in actor metadata).
func DecodeManifest(b []byte) (Manifest, error) {
	if len(b) > MaxManifestBytes {
		return nil, fmt.Errorf("manifest: %d bytes, limit %d", len(b), MaxManifestBytes)
	}
	var m []Requirement
	if err := codec.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if len(m) == 0 {
		return nil, errors.New("manifest: empty (omit it instead)")
	}
	for _, r := range m {
		if r.Params == nil {
			return nil, fmt.Errorf("manifest: %s: params must be an array, not null", r.Action)
		}
	}
	if err := Manifest(m).Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// MissingError names the entitlement a host call lacks.
type MissingError struct {
	Op          string // host op
	Entitlement string // text form, e.g. "jobs:llm" or "http:api.example.com"
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s: missing entitlement %q: the actor's deployment manifest does not declare it (spec 002 §15; deploy with --require %s)", e.Op, e.Entitlement, e.Entitlement)
}

// CheckTimers is the syscall gate of set_timer / set_interval.
func (m Manifest) CheckTimers(op string) error {
	if _, ok := m.Find(NameTimers); !ok {
		return &MissingError{Op: op, Entitlement: NameTimers}
	}
	return nil
}

// CheckJob is the syscall gate of submit_job: the job type must be declared
// under jobs and every required domain covered by http.
func (m Manifest) CheckJob(op string, t job.JobType, domains []string) error {
	jobs, _ := m.Find(NameJobs)
	if !slices.Contains(jobs.Params, t.String()) {
		return &MissingError{Op: op, Entitlement: NameJobs + ":" + t.String()}
	}
	http, _ := m.Find(NameHTTP)
	for _, d := range domains {
		if !Satisfies([]string{d}, http.Params) {
			return &MissingError{Op: op, Entitlement: NameHTTP + ":" + d}
		}
	}
	return nil
}

// covers reports whether entry p (same entitlement) covers every parameter
// of r: http parameters match like runner domains, job types exactly.
func (p Requirement) covers(r Requirement) bool {
	if !p.Action.Equal(r.Action) {
		return false
	}
	if r.Name() == NameHTTP {
		return Satisfies(r.Params, p.Params)
	}
	for _, x := range r.Params {
		if !slices.Contains(p.Params, x) {
			return false
		}
	}
	return true
}

// Inherit computes a child actor's manifest from its parent's (§15.3: a
// child inherits only entitlements marked inheritable). With no request
// the child receives the parent's inheritable entries unchanged; otherwise
// every requested entry must be covered by an inheritable parent entry (the
// same entitlement with a superset of its parameters), and the child gets
// exactly what it requested. The result is normalized; nil means none.
func Inherit(parent, requested Manifest) (Manifest, error) {
	var inheritable Manifest
	for _, r := range parent {
		if r.Inheritable {
			inheritable = append(inheritable, r)
		}
	}
	if requested == nil {
		if len(inheritable) == 0 {
			return nil, nil
		}
		return inheritable.Normalize()
	}
	req, err := requested.Normalize()
	if err != nil {
		return nil, err
	}
	for _, r := range req {
		p, ok := inheritable.Find(r.Name())
		if !ok || !p.covers(r) {
			if full, had := parent.Find(r.Name()); had && !full.Inheritable {
				return nil, fmt.Errorf("inherit: the parent's %s entitlement is not inheritable", r.Name())
			}
			return nil, fmt.Errorf("inherit: %s is not covered by the parent's inheritable entitlements", r)
		}
	}
	return req, nil
}

// String is the text form NAME[:P1,P2…][+inheritable] (see ParseRequirement).
func (r Requirement) String() string {
	s := r.Name()
	if s == "" {
		s = r.Action.String()
	}
	if len(r.Params) > 0 {
		s += ":" + strings.Join(r.Params, ",")
	}
	if r.Inheritable {
		s += "+inheritable"
	}
	return s
}

// ParseRequirement parses the CLI text form
//
//	timers | jobs:TYPE[,TYPE…] | http:DOMAIN[,DOMAIN…]
//
// with an optional "+inheritable" suffix, and validates it.
func ParseRequirement(text string) (Requirement, error) {
	body, inh := strings.CutSuffix(text, "+inheritable")
	name, args, has := strings.Cut(body, ":")
	a, ok := actionByName(name)
	if !ok {
		return Requirement{}, fmt.Errorf("requirement %q: unknown entitlement %q (want timers, jobs:TYPES, http:DOMAINS or eth:EVENTS)", text, name)
	}
	r := Requirement{Action: a, Inheritable: inh}
	if has {
		for _, p := range strings.Split(args, ",") {
			r.Params = append(r.Params, strings.ToLower(strings.TrimSpace(p)))
		}
		slices.Sort(r.Params)
		r.Params = slices.Compact(r.Params)
	}
	if err := r.Validate(); err != nil {
		return Requirement{}, fmt.Errorf("requirement %q: %w", text, err)
	}
	return r, nil
}

// requirementJSON is the JSON form used by manifest files and the API.
type requirementJSON struct {
	Entitlement string   `json:"entitlement"`
	Params      []string `json:"params,omitempty"`
	Inheritable bool     `json:"inheritable"`
	Action      string   `json:"action,omitempty"` // the §7.1 action, informative on output
}

// MarshalJSON writes {"entitlement","params","inheritable","action"}.
func (r Requirement) MarshalJSON() ([]byte, error) {
	return json.Marshal(requirementJSON{Entitlement: r.Name(), Params: r.Params, Inheritable: r.Inheritable, Action: r.Action.String()})
}

// UnmarshalJSON reads the form above ("action" is ignored: the entitlement
// name determines it).
func (r *Requirement) UnmarshalJSON(b []byte) error {
	var j requirementJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("requirement: %w", err)
	}
	a, ok := actionByName(j.Entitlement)
	if !ok {
		return fmt.Errorf("requirement: unknown entitlement %q (want timers, jobs or http)", j.Entitlement)
	}
	v := Requirement{Action: a, Inheritable: j.Inheritable}
	for _, p := range j.Params {
		v.Params = append(v.Params, strings.ToLower(p))
	}
	slices.Sort(v.Params)
	v.Params = slices.Compact(v.Params)
	if err := v.Validate(); err != nil {
		return fmt.Errorf("requirement: %w", err)
	}
	*r = v
	return nil
}

// ManifestFile is the JSON deployment manifest read by
// `cowboy actor deploy --manifest FILE`:
//
//	{"requires": [{"entitlement": "jobs", "params": ["http"]},
//	              {"entitlement": "http", "params": ["api.example.com"], "inheritable": true}]}
type ManifestFile struct {
	Requires []Requirement `json:"requires"`
}

// ParseManifestJSON parses a manifest file and normalizes it.
func ParseManifestJSON(b []byte) (Manifest, error) {
	var f ManifestFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if len(f.Requires) == 0 {
		return nil, errors.New("manifest: \"requires\" is empty")
	}
	return Manifest(f.Requires).Normalize()
}
