// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package stats

import (
	"runtime"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// OwnHistograms is the most recorders of one set (NewRecorders) that own a
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

// NewRecorders returns n recorders, one for each of n goroutines. Up to
// OwnHistograms each owns a histogram, as NewRecorder's does. Past that the
// recorders share Shards() histograms (recorder i the (i mod Shards())th):
// each keeps its counts by code and its error samples, and writes its
// latencies to its shared histogram in batches, under that histogram's own
// lock, so memory per recorder stays under 1 KB and the recording path
// still allocates nothing. Merge and Reset such a set whole.
func NewRecorders(n int) []*Recorder {
	rs := make([]*Recorder, n)
	if n <= OwnHistograms {
		for i := range rs {
			rs[i] = NewRecorder()
		}
		return rs
	}
	shards := make([]shard, Shards())
	for i := range shards {
		shards[i].hist = newHistogram()
	}
	bufs := make([][batch]int64, n)
	for i := range rs {
		rs[i] = &Recorder{shard: &shards[i%len(shards)], buf: &bufs[i]}
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
