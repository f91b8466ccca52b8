// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import "github.com/rpclab/rpclab/result"

// EventKind says what happened to a step.
type EventKind int

const (
	// StepStarted: the step is about to run (Record is nil).
	StepStarted EventKind = iota
	// StepEnded: the step's record was handed to the sink.
	StepEnded
)

// Event is one moment of a sweep: step I (from 0) of N started or ended.
type Event struct {
	Kind EventKind
	I, N int
	Step Step
	// Record is the step's record (StepEnded only).
	Record *result.Record
}

// Progress is told about each step as it starts and ends, on the sweep's
// goroutine; a nil Progress is told nothing. It is the one progress shape
// of the load generator (Sweep, SweepOpen, extclient's Sweep).
type Progress func(Event)

// Started tells p that step i of n started.
func (p Progress) Started(i, n int, s Step) {
	if p != nil {
		p(Event{Kind: StepStarted, I: i, N: n, Step: s})
	}
}

// Ended tells p that step i of n ended with rec.
func (p Progress) Ended(i, n int, s Step, rec *result.Record) {
	if p != nil {
		p(Event{Kind: StepEnded, I: i, N: n, Step: s, Record: rec})
	}
}
