// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// Sweep runs every step of spec in order and hands each record to sink as
// soon as it is measured, so a stopped sweep loses nothing that was
// measured. When a step cannot reach the target, the steps after it are not
// run: each gets a failed record saying so. Sweep returns ctx's error if it
// was stopped, an error if any step failed, or sink's first error.
//
// To end a sweep at once on a failure it cannot see (the server it
// measures died), cancel ctx with a cause (context.WithCancelCause): the
// step running then gets a failed record saying "stopped: <cause>", and
// Sweep returns the cause itself, so errors.Is finds it.
func Sweep(ctx context.Context, spec *Spec, o Options, sink func(*result.Record) error, prog Progress) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	steps := spec.Steps()
	var failedSteps int
	var unreachable string
	for i, st := range steps {
		prog.Started(i, len(steps), st)
		var rec *result.Record
		if unreachable != "" {
			rec = failed(NewRecord(spec, st, o), fmt.Errorf("%w: not run: %s", ErrUnreachable, unreachable))
		} else {
			var cause, err error
			rec, cause, err = runClosed(ctx, spec, st, nil, &Load{}, o)
			if err != nil {
				return stopped(ctx, err) // stopped before the step measured anything
			}
			if errors.Is(cause, ErrUnreachable) {
				unreachable = fmt.Sprintf("step %d (%s %s inflight=%d) could not connect", i+1, st.Conn, st.RPC, st.Inflight)
			}
		}
		if err := sink(rec); err != nil {
			return err
		}
		if notMeasured(rec) {
			failedSteps++
		}
		prog.Ended(i, len(steps), st, rec)
		if ctx.Err() != nil {
			return stopped(ctx, ctx.Err())
		}
	}
	if failedSteps > 0 {
		return fmt.Errorf("loadgen: %d of %d steps failed or stalled", failedSteps, len(steps))
	}
	return nil
}

// notMeasured reports whether rec's step failed, or was found stalled by
// the sink (verdict.MarkStall): the sweep then ends with an error.
func notMeasured(rec *result.Record) bool {
	return rec.Status == result.StatusFailed || rec.Status == result.StatusStalled
}

// Duration is how long spec takes to run, connection set-up aside, its
// AutoPool steps sized by rule (see StepWarmup).
func (s *Spec) Duration(rule *adaptive.Rule) time.Duration {
	var d time.Duration
	for _, st := range s.Steps() {
		d += s.StepWarmup(st, rule) + s.Interval
	}
	return d
}

// stopped is the error of a sweep stopped with err: ctx's cause when ctx
// was cancelled with one (see Sweep), err otherwise.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}
