package entitlement

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Text forms of scopes and actions, for the CLI and the API:
//
//	global | actor:0xADDR | token:0xID32 | runner:0xADDR | pool:NAME | namespace:NAME
//	all | token_transfer | … | execute:HANDLER | runner_register | join_pool:NAME | custom:TEXT
//
// Pool, namespace, handler and custom data are taken as UTF-8 text; a
// "0x" prefix gives them as hex bytes instead.

var actionNames = [...]string{"all", "token_transfer", "token_mint", "token_burn", "token_freeze", "token_set_hook",
	"token_transfer_ownership", "actor_deploy", "actor_send_message", "execute", "runner_register", "runner_submit_job",
	"runner_submit_result", "join_pool", "system_transfer", "system_create_account", "system_upgrade", "custom"}

var scopeNames = [...]string{"global", "actor", "token", "runner", "pool", "namespace"}

func textBytes(b []byte) string {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == ':' {
			return "0x" + hex.EncodeToString(b)
		}
	}
	return string(b)
}

func parseBytes(s string) ([]byte, error) {
	if strings.HasPrefix(s, "0x") {
		return hex.DecodeString(s[2:])
	}
	return []byte(s), nil
}

// String is the text form of s.
func (s Scope) String() string {
	if int(s.Kind) >= len(scopeNames) {
		return fmt.Sprintf("scope(%d)", s.Kind)
	}
	switch s.Kind {
	case ScopeGlobal:
		return "global"
	case ScopeActor, ScopeRunner:
		return scopeNames[s.Kind] + ":" + s.Addr.String()
	case ScopeToken:
		return "token:0x" + hex.EncodeToString(s.ID)
	}
	return scopeNames[s.Kind] + ":" + textBytes(s.ID)
}

// String is the text form of a.
func (a Action) String() string {
	if int(a.Kind) >= len(actionNames) {
		return fmt.Sprintf("action(%d)", a.Kind)
	}
	if a.Kind.hasData() {
		return actionNames[a.Kind] + ":" + textBytes(a.Data)
	}
	return actionNames[a.Kind]
}

// ParseScope parses the text form of a scope and validates it.
func ParseScope(text string) (Scope, error) {
	kind, arg, has := strings.Cut(text, ":")
	var s Scope
	switch kind {
	case "global":
		if has {
			return s, fmt.Errorf("scope %q: global takes no argument", text)
		}
		return GlobalScope(), nil
	case "actor", "runner":
		a, err := types.ParseAddress(arg)
		if err != nil {
			return s, fmt.Errorf("scope %q: %w", text, err)
		}
		if kind == "actor" {
			return ActorScope(a), nil
		}
		return RunnerScope(a), nil
	case "token":
		h, err := types.ParseHash(arg)
		if err != nil {
			return s, fmt.Errorf("scope %q: %w", text, err)
		}
		s = TokenScope(h)
	case "pool", "namespace":
		b, err := parseBytes(arg)
		if err != nil || !has {
			return s, fmt.Errorf("scope %q: want %s:NAME", text, kind)
		}
		s = RunnerPoolScope(b)
		if kind == "namespace" {
			s = NamespaceScope(b)
		}
	default:
		return s, fmt.Errorf("scope %q: want global, actor:ADDR, token:ID, runner:ADDR, pool:NAME or namespace:NAME", text)
	}
	return s, s.Validate()
}

// ParseAction parses the text form of an action and validates it.
func ParseAction(text string) (Action, error) {
	name, arg, has := strings.Cut(text, ":")
	for k, n := range actionNames {
		if n != name {
			continue
		}
		a := Action{Kind: ActionKind(k)}
		if a.Kind.hasData() != has {
			return a, fmt.Errorf("action %q: %s takes %s", text, name, map[bool]string{true: "an argument (name:ARG)", false: "no argument"}[a.Kind.hasData()])
		}
		if has {
			b, err := parseBytes(arg)
			if err != nil {
				return a, fmt.Errorf("action %q: %w", text, err)
			}
			a.Data = b
		}
		return a, a.Validate()
	}
	return Action{}, fmt.Errorf("action %q: unknown (one of %s)", text, strings.Join(actionNames[:], ", "))
}
