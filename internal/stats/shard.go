// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package stats

import (
	"runtime"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// OwnHistograms is the most recorders of one Set that own a
// histogram each. A histogram of this package's geometry takes 229 KB (its
// counts array: 1 ns to 100 s at three significant digits), which was most
// of the 340 KB the Go client held per RPC in flight: 3.4 GB at 10,000 in
// flight. Past this count the set's recorders share Shards histograms.
const OwnHistograms = 64

// batch is how many latencies a sharing recorder keeps before it writes
// them to its shared histogram under that histogram's lock: one lock per
// 32 RPCs, and 256 bytes per recorder.
const batch = 32

// shard is one histogram shared by several recorders of a set.
type shard struct {
	mu   sync.Mutex
	hist *hdrhistogram.Histogram
	_    [48]byte // neighbouring shards' locks off one cache line
}

// Shards is how many histograms the recorders of a set share past
// OwnHistograms: four per CPU the Go scheduler runs on, at least 16, so
// that two goroutines rarely want one lock at once.
func Shards() int {
	return max(16, 4*runtime.GOMAXPROCS(0))
}

// Set hands out the recorders of one step or window, one per goroutine,
// and merges them. The first OwnHistograms each own a histogram, as
// NewRecorder's does. Past that they share Shards() histograms (the ith
// past OwnHistograms the (i mod Shards())th): each keeps its counts by
// code and its error samples, and writes its latencies to its shared
// histogram in batches, under that histogram's own lock, so memory per
// recorder stays under 1 KB and the recording path still allocates
// nothing. The zero Set is ready to use.
type Set struct {
	mu     sync.Mutex // Recorder may be called while others record
	shards []shard
	recs   []*Recorder
}

// Recorder returns a new recorder of the set, for one goroutine.
func (s *Set) Recorder() *Recorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r *Recorder
	if i := len(s.recs) - OwnHistograms; i < 0 {
		r = NewRecorder()
	} else {
		if s.shards == nil {
			s.shards = make([]shard, Shards())
			for j := range s.shards {
				s.shards[j].hist = newHistogram()
			}
		}
		r = &Recorder{shard: &s.shards[i%len(s.shards)], buf: new([batch]int64)}
	}
	s.recs = append(s.recs, r)
	return r
}

// Merge combines every recorder of the set into one Summary, at a moment
// none of them records.
func (s *Set) Merge() *Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Merge(s.recs...)
}

// Reset empties every recorder of the set, at a moment none of them
// records.
func (s *Set) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.recs {
		r.Reset()
	}
}

// NewRecorders returns n recorders of a new Set.
func NewRecorders(n int) []*Recorder {
	var s Set
	rs := make([]*Recorder, n)
	for i := range rs {
		rs[i] = s.Recorder()
	}
	return rs
}

// flush writes the buffered latencies to the shared histogram.
func (r *Recorder) flush() {
	if r.nbuf == 0 {
		return
	}
	r.shard.mu.Lock()
	for _, v := range r.buf[:r.nbuf] {
		_ = r.shard.hist.RecordValue(v) // in range by construction
	}
	r.shard.mu.Unlock()
	r.nbuf = 0
}
