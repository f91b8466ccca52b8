// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package progress is the one shape of a run's progress callback: step I
// (from 0) of N started, or ended with its record. Each engine names it
// for its own step and record: loadgen.Progress (ping steps), bulk.Progress
// (bulk steps), flow.Progress (flow cells).
package progress

// Kind says what happened to a step.
type Kind int

const (
	// Started: the step is about to run (Record is nil).
	Started Kind = iota
	// Ended: the step ran; Record is its record.
	Ended
)

// Event is one moment of a run over steps of type S with records of type R.
type Event[S, R any] struct {
	Kind Kind
	I, N int
	Step S
	// Record is the step's record (Ended only).
	Record *R
}

// Func is told about each step as it starts and ends, on the run's
// goroutine; a nil Func is told nothing.
type Func[S, R any] func(Event[S, R])

// Started tells f that step i of n started.
func (f Func[S, R]) Started(i, n int, s S) {
	if f != nil {
		f(Event[S, R]{Kind: Started, I: i, N: n, Step: s})
	}
}

// Ended tells f that step i of n ended with rec.
func (f Func[S, R]) Ended(i, n int, s S, rec *R) {
	if f != nil {
		f(Event[S, R]{Kind: Ended, I: i, N: n, Step: s, Record: rec})
	}
}
