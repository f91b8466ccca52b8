// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import "github.com/rpclab/rpclab/internal/stats"

// window is when a step's calls are measured and where each of its
// callers records them, whatever the load model: a fixed window (a
// step's warm-up, spec.StepWarmup, then spec.Interval, its recorders
// merged at the end) or a driver's marks (a Live run: measured from its start, each
// caller's recorder swapped out at each mark).
type window interface {
	// recorder is where a new caller records; the goroutine that starts
	// the callers calls it, while the others run.
	recorder() recorder
}

var (
	_ window = (*fixedWindow)(nil)
	_ window = (*Live)(nil)
)

// fixedWindow gives each caller a recorder of its own (past
// stats.OwnHistograms callers, one that shares its histogram: memory per
// RPC in flight stays bounded), merged once every caller has ended.
type fixedWindow struct{ recs stats.Set }

func (w *fixedWindow) recorder() recorder { return w.recs.Recorder() }

// summary merges every caller's recorder.
func (w *fixedWindow) summary() *stats.Summary { return w.recs.Merge() }
