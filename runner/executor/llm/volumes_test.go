package llm

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm/standin"
)

// Input volume files are substituted into the prompt the model receives;
// a reference to a file the job did not read is the job's fault.
func TestVolumeInputsInPrompt(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	reg := executor.NewRegistry(f.exec)
	s := spec(`{"model":"chat","system":"Use {{volume:/in/rules.txt}}","prompt":"Summarise: {{volume:/in/doc.txt}}"}`, job.FormatText, 200)
	inputs := []executor.VolumeFile{{Path: "/in/doc.txt", Content: []byte("the cat sat")}, {Path: "/in/rules.txt", Content: []byte("short words")}}
	if _, err := reg.Execute(context.Background(), executor.Request{JobID: types.Hash{1}, Spec: s, Inputs: inputs}); err != nil {
		t.Fatal(err)
	}
	var sent struct{ Messages []Message }
	if err := json.Unmarshal(f.srv.LastChatRequest(), &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Messages) != 2 || sent.Messages[0].Content != "Use short words" || sent.Messages[1].Content != "Summarise: the cat sat" {
		t.Fatalf("sent %+v", sent.Messages)
	}
	s.Input = []byte(`{"model":"chat","prompt":"{{volume:/in/other.txt}}"}`)
	if _, err := reg.Execute(context.Background(), executor.Request{JobID: types.Hash{1}, Spec: s, Inputs: inputs}); !errors.Is(err, executor.ErrBadInput) {
		t.Fatalf("unknown input file: %v, want ErrBadInput", err)
	}
}
