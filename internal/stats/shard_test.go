// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package stats

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// recordAll records, in each of rs, latencies i*7µs+j for j < per, with
// every fifth RPC of recorder 3 failing.
func recordAll(rs []*Recorder, per int) {
	for i, r := range rs {
		for j := range per {
			if i == 3 && j%5 == 0 {
				r.RecordErr(time.Millisecond, codes.Unavailable, errors.New("gone"))
				continue
			}
			r.Record(time.Duration(i)*7*time.Microsecond+time.Duration(j), codes.OK)
		}
	}
}

// TestRecordersMergeAsOwn: a set that shares histograms merges to exactly
// what recorders with their own histograms merge to, counts, histogram and
// error sample alike, whether the last batch was full or not.
func TestRecordersMergeAsOwn(t *testing.T) {
	for _, tc := range []struct{ n, per int }{
		{n: OwnHistograms, per: 100},
		{n: OwnHistograms + 1, per: 100},
		{n: 200, per: batch},
		{n: 200, per: batch + 5},
		{n: 100, per: 1},
	} {
		t.Run(fmt.Sprintf("n=%d,per=%d", tc.n, tc.per), func(t *testing.T) {
			own := make([]*Recorder, tc.n)
			for i := range own {
				own[i] = NewRecorder()
			}
			set := NewRecorders(tc.n)
			recordAll(own, tc.per)
			recordAll(set, tc.per)
			want, got := Merge(own...), Merge(set...)
			if !got.Hist.Equals(want.Hist) {
				t.Errorf("got a histogram of %d values (P99 %d ns), want %d (P99 %d ns)",
					got.Hist.TotalCount(), got.Hist.ValueAtQuantile(99), want.Hist.TotalCount(), want.Hist.ValueAtQuantile(99))
			}
			if got.ByCode != want.ByCode || got.ErrorSample() != want.ErrorSample() {
				t.Errorf("got counts %v and sample %q, want %v and %q", got.ByCode, got.ErrorSample(), want.ByCode, want.ErrorSample())
			}
			// A second merge counts nothing twice.
			if again := Merge(set...); !again.Hist.Equals(want.Hist) {
				t.Errorf("a second merge got %d values, want %d", again.Hist.TotalCount(), want.Hist.TotalCount())
			}
		})
	}
}

// TestRecordersShareBeyondOwn: the first OwnHistograms recorders of a Set
// own a histogram each; those past it share Shards() histograms.
func TestRecordersShareBeyondOwn(t *testing.T) {
	for _, tc := range []struct{ n, wantHists int }{
		{n: 1, wantHists: 1},
		{n: OwnHistograms, wantHists: OwnHistograms},
		{n: OwnHistograms + 1, wantHists: OwnHistograms + 1},
		{n: OwnHistograms + Shards() + 5, wantHists: OwnHistograms + Shards()},
		{n: 10000, wantHists: OwnHistograms + Shards()},
	} {
		hists := map[any]bool{}
		for _, r := range NewRecorders(tc.n) {
			if r.shard != nil {
				hists[r.shard] = true
			} else {
				hists[r.hist] = true
			}
		}
		if len(hists) != tc.wantHists {
			t.Errorf("NewRecorders(%d): got %d histograms, want %d", tc.n, len(hists), tc.wantHists)
		}
	}
}

// TestRecordersMemory: 10,000 recorders take under 1 KB each beyond their
// shared histograms, where 10,000 own histograms took 2.3 GB.
func TestRecordersMemory(t *testing.T) {
	const n = 10000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	set := NewRecorders(n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	shared := uint64(OwnHistograms+Shards()) * 240 << 10
	if got := after.HeapAlloc - before.HeapAlloc; got > shared+n*1024 {
		t.Errorf("got %d bytes for %d recorders, want at most %d (%d histograms and 1 KB each)", got, n, shared+n*1024, OwnHistograms+Shards())
	}
	runtime.KeepAlive(set)
}

// TestRecordersConcurrent: every goroutine records into its own recorder of
// one set at once (the race detector watches the shared histograms).
func TestRecordersConcurrent(t *testing.T) {
	const n, per = 500, 203
	set := NewRecorders(n)
	var wg sync.WaitGroup
	for _, r := range set {
		wg.Go(func() {
			for j := range per {
				r.Record(time.Duration(j+1)*time.Microsecond, codes.OK)
			}
		})
	}
	wg.Wait()
	if got := Merge(set...); got.Hist.TotalCount() != n*per || got.OK() != n*per {
		t.Errorf("got %d latencies and %d OK, want %d", got.Hist.TotalCount(), got.OK(), n*per)
	}
}

// TestRecordersReset: a reset set merges to nothing and records afresh.
func TestRecordersReset(t *testing.T) {
	set := NewRecorders(200)
	recordAll(set, 40)
	for _, r := range set {
		r.Reset()
	}
	if got := Merge(set...); got.Total() != 0 || got.Hist.TotalCount() != 0 {
		t.Fatalf("after reset got %d RPCs and %d latencies, want none", got.Total(), got.Hist.TotalCount())
	}
	set[7].Record(time.Millisecond, codes.OK)
	if got := Merge(set...); got.Hist.TotalCount() != 1 {
		t.Errorf("got %d latencies, want 1", got.Hist.TotalCount())
	}
}

func TestSharedRecordDoesNotAllocate(t *testing.T) {
	r := NewRecorders(OwnHistograms + 1)[OwnHistograms]
	if n := testing.AllocsPerRun(1000, func() { r.Record(42*time.Microsecond, codes.OK) }); n != 0 {
		t.Errorf("Record allocates %v times per call, want 0", n)
	}
}

// BenchmarkRecordShared is BenchmarkRecord for a recorder that shares its
// histogram (a set past OwnHistograms): its batch's lock, amortised.
func BenchmarkRecordShared(b *testing.B) {
	r := NewRecorders(OwnHistograms + 1)[OwnHistograms]
	b.ReportAllocs()
	d := 37 * time.Microsecond
	for i := 0; b.Loop(); i++ {
		r.Record(d+time.Duration(i&1023), codes.OK)
	}
}

// TestSetHandsOutWhileOthersRecord: a Set's Recorder may be called while
// recorders it gave out record (the open loop starts senders on demand).
func TestSetHandsOutWhileOthersRecord(t *testing.T) {
	var s Set
	var wg sync.WaitGroup
	for range 200 {
		r := s.Recorder()
		wg.Go(func() {
			for j := range 50 {
				r.Record(time.Duration(j+1)*time.Microsecond, codes.OK)
			}
		})
	}
	wg.Wait()
	if got := s.Merge(); got.Hist.TotalCount() != 200*50 {
		t.Errorf("got %d latencies, want %d", got.Hist.TotalCount(), 200*50)
	}
	s.Reset()
	if got := s.Merge(); got.Total() != 0 {
		t.Errorf("after Reset got %d RPCs, want none", got.Total())
	}
}
