package runner

import (
	"context"
	"fmt"
	"path"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/volumes"
)

// OutputFileName is the file a job's result is written to under the output
// path of its output volume: <path>/result.
const OutputFileName = "result"

// run executes one job. For a job with volumes it first checks every token
// and reads the input volumes (bounded by the job's memory bound) into the
// request; after a successful run the job's output file is checked against
// the output path, and the aggregator alone writes it (members only agree
// on the result, hence on the content hash). A refused volume is the job's
// fault (executor.ErrBadInput), reported like any bad input.
func (d *Daemon) run(ctx context.Context, rec *JobRecord, spec *job.JobSpec) (executor.Result, error) {
	req := executor.Request{JobID: rec.ID, Spec: spec, Height: rec.AssignedAt}
	if len(spec.Volumes) == 0 {
		return d.o.Executors.Execute(ctx, req)
	}
	if d.o.Volumes == nil {
		return executor.Result{}, fmt.Errorf("job %s: %w: this runner has no CBFS access for job volumes", rec.ID, executor.ErrRefused)
	}
	inputs, n, err := d.o.Volumes.ReadInputs(ctx, spec, int64(spec.Bounds.MaxMemoryBytes))
	if err != nil {
		return executor.Result{}, fmt.Errorf("job %s: read input volumes: %w", rec.ID, err)
	}
	d.m.volumeBytesRead.Add(float64(n))
	req.Inputs = inputs
	res, err := d.o.Executors.Execute(ctx, req)
	if err != nil {
		return res, err
	}
	out, ok := spec.OutputVolume()
	if !ok {
		return res, nil
	}
	files := []volumes.File{{Path: path.Join(out.Path, OutputFileName), Content: res.Output}}
	if err := volumes.CheckOutputs(spec, files); err != nil {
		return executor.Result{}, err
	}
	if len(res.Output) > verify.MaxResultBytes(spec) {
		// Too large for the chain: the output file is the blob, the result
		// its reference (every member computes the same one).
		if res.Output, err = BlobResult(types.Hash(out.Volume), files[0].Path, res.Output); err != nil {
			return executor.Result{}, err
		}
	}
	if rec.Aggregator != d.self {
		return res, nil
	}
	c, err := d.o.Volumes.WriteOutputs(ctx, spec, files)
	if err != nil {
		return executor.Result{}, fmt.Errorf("job %s: write output volume: %w", rec.ID, err)
	}
	rec.Output = &c
	d.log.Info("wrote output volume", "job", rec.ID, "volume", c.Volume, "content", c.ContentHash, "root", c.Root, "version", c.Version)
	return res, nil
}
