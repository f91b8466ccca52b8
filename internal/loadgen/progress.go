// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"github.com/rpclab/rpclab/internal/progress"
	"github.com/rpclab/rpclab/internal/result"
)

// EventKind says what happened to a step.
type EventKind = progress.Kind

const (
	// StepStarted: the step is about to run (Record is nil).
	StepStarted = progress.Started
	// StepEnded: the step's record was handed to the sink.
	StepEnded = progress.Ended
)

// Event is one moment of a sweep: step I (from 0) of N started or ended.
type Event = progress.Event[Step, result.Record]

// Progress is told about each step as it starts and ends, on the sweep's
// goroutine; a nil Progress is told nothing. It is the load generator's
// name for the one progress shape (package internal/progress, which bulk
// and flow name too), used by Sweep, SweepOpen and extclient's Sweep.
type Progress = progress.Func[Step, result.Record]
