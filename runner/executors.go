package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	chaintypes "github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/httpx"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm"
	"github.com/cowboy-foundation/cowboy/runner/executor/mcp"
	"github.com/cowboy-foundation/cowboy/runner/result"
)

// BuildExecutors creates the executors for the configured job types. MCP
// servers given as commands are started here; Close the registry to stop
// them.
func BuildExecutors(ctx context.Context, c *Config, types []job.JobType, log *slog.Logger) (*executor.Registry, error) {
	reg := executor.NewRegistry()
	fail := func(err error) (*executor.Registry, error) {
		reg.Close()
		return nil, err
	}
	if d := c.Jobs.ToolchainDigest; d != "" {
		h, err := chaintypes.ParseHash(d)
		if err != nil {
			return fail(fmt.Errorf("jobs.toolchain_digest: %w", err))
		}
		reg.SetToolchainDigest(h)
	}
	for _, t := range types {
		switch t {
		case job.JobTypeHTTP:
			cfg := httpx.Config{}
			if c.Executors.HTTP != nil {
				cfg = *c.Executors.HTTP
			}
			e, err := httpx.New(cfg)
			if err != nil {
				return fail(fmt.Errorf("executors.http: %w", err))
			}
			reg.Register(e)
		case job.JobTypeLLM:
			if c.Executors.LLM == nil {
				return fail(errors.New("job type llm needs an [executors.llm] section with models"))
			}
			cfg := *c.Executors.LLM
			cfg.Logger = log.With("executor", "llm")
			e, err := llm.New(cfg)
			if err != nil {
				return fail(fmt.Errorf("executors.llm: %w", err))
			}
			reg.Register(e)
		case job.JobTypeMCP:
			if c.Executors.MCP == nil {
				return fail(errors.New("job type mcp needs an [executors.mcp] section with servers"))
			}
			cfg := *c.Executors.MCP
			cfg.Logger = log.With("executor", "mcp")
			e, err := mcp.New(ctx, cfg)
			if err != nil {
				return fail(fmt.Errorf("executors.mcp: %w", err))
			}
			reg.Register(e)
		default:
			return fail(fmt.Errorf("job type %s has no executor", t))
		}
	}
	return reg, nil
}

// DefaultCheck vets a result with runner/result before it is signed; for
// LLM jobs the job's system prompt feeds the prompt-leak check.
func DefaultCheck(spec *job.JobSpec, res *executor.Result) error {
	var system []byte
	if spec.JobType == job.JobTypeLLM {
		var in llm.Input
		if json.Unmarshal(spec.Input, &in) == nil {
			system = append(system, in.System...)
			for _, m := range in.Messages {
				if m.Role == "system" {
					system = append(append(system, '\n'), m.Content...)
				}
			}
		}
	}
	return result.Check(spec, *res, system)
}
