package llm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm/standin"
)

// A job naming a registry model runs the model configured under the id's
// name; an input naming another model is the job's fault, and a registry
// model this runner does not configure is a refusal (never a fault
// report). A job pinning a toolchain digest runs only on a runner
// declaring that digest.
func TestRegistryModelAndToolchain(t *testing.T) {
	id := types.Hash{0xAB}
	f := newFixture(t, standin.Options{}, func(mc *ModelConfig) { mc.Name = id.String() })
	s := spec(fmt.Sprintf(`{"model":%q,"prompt":"What is 2 + 3?"}`, id), job.FormatText, 200)
	s.ModelID = id
	if _, err := run(t, f, s); err != nil {
		t.Fatalf("registry model: %v", err)
	}
	s.Input = []byte(`{"model":"chat","prompt":"What is 2 + 3?"}`)
	if _, err := run(t, f, s); !errors.Is(err, executor.ErrBadInput) {
		t.Fatalf("input naming another model: %v", err)
	}
	other := types.Hash{0xCD}
	s.ModelID, s.Input = other, []byte(fmt.Sprintf(`{"model":%q,"prompt":"x"}`, other))
	if _, err := run(t, f, s); !errors.Is(err, executor.ErrRefused) {
		t.Fatalf("unconfigured registry model: %v", err)
	}

	s = spec(fmt.Sprintf(`{"model":%q,"prompt":"What is 2 + 3?"}`, id), job.FormatText, 200)
	s.ToolchainDigest = types.Hash{0x70}
	reg := executor.NewRegistry(f.exec)
	req := executor.Request{JobID: types.Hash{1}, Spec: s}
	if _, err := reg.Execute(t.Context(), req); !errors.Is(err, executor.ErrRefused) {
		t.Fatalf("pinned job on a runner declaring no digest: %v", err)
	}
	reg.SetToolchainDigest(types.Hash{0x71})
	if _, err := reg.Execute(t.Context(), req); !errors.Is(err, executor.ErrRefused) {
		t.Fatalf("pinned job on a runner declaring another digest: %v", err)
	}
	reg.SetToolchainDigest(s.ToolchainDigest)
	if _, err := reg.Execute(t.Context(), req); err != nil {
		t.Fatalf("pinned job on a matching runner: %v", err)
	}
}
