// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"iter"
	"sync/atomic"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

// callStart is where one caller publishes when its current RPC was sent
// (Unix ns; 0 while it has none in flight), so that the step's end can
// see the RPCs still in flight and how long they had waited: a server
// that stalls leaves them there, with no reply to record. One atomic
// store before and one after each call, no lock and no allocation on the
// hot path (TestCallerAddsNoAllocations); padded to a cache line of its
// own so callers do not share one.
type callStart struct {
	ns atomic.Int64
	_  [56]byte
}

// begin publishes that an RPC was sent at t (nothing on a nil slot).
func (s *callStart) begin(t time.Time) {
	if s != nil {
		s.ns.Store(t.UnixNano())
	}
}

// done publishes that the caller's RPC ended.
func (s *callStart) done() {
	if s != nil {
		s.ns.Store(0)
	}
}

// inFlight counts the RPCs in flight on slots at end and the age of the
// oldest (0 when none): their latencies are censored, known only to be
// at least their age.
func inFlight(end time.Time, slots iter.Seq[*callStart]) (n int64, oldest time.Duration) {
	e := end.UnixNano()
	for s := range slots {
		t := s.ns.Load()
		if t == 0 {
			continue
		}
		n++
		oldest = max(oldest, time.Duration(e-t))
	}
	return n, oldest
}

// setInFlight writes inFlight's figures into rec.
func setInFlight(rec *result.Record, n int64, oldest time.Duration) {
	rec.InFlightAtEnd = &n
	rec.OldestInFlightNS = int64(max(oldest, 0))
	if n == 0 {
		rec.OldestInFlightNS = 0
	}
}

// each yields a pointer to each of slots.
func each(slots []callStart) iter.Seq[*callStart] {
	return func(yield func(*callStart) bool) {
		for i := range slots {
			if !yield(&slots[i]) {
				return
			}
		}
	}
}
