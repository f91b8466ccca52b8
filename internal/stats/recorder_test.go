// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package stats

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestRecorderCountsAndQuantiles(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	for i := 1; i <= 100; i++ {
		a.Record(time.Duration(i)*time.Microsecond, codes.OK)
	}
	b.Record(500*time.Microsecond, codes.OK)
	b.Record(time.Millisecond, codes.Unavailable)
	b.Record(time.Millisecond, codes.Unavailable)
	b.Record(time.Millisecond, codes.DeadlineExceeded)
	b.Record(time.Millisecond, codes.Code(99)) // out of range: Unknown

	s := Merge(a, b)
	if got, want := s.Total(), int64(105); got != want {
		t.Errorf("Total() = %d, want %d", got, want)
	}
	if got, want := s.OK(), int64(101); got != want {
		t.Errorf("OK() = %d, want %d", got, want)
	}
	wantErr := map[string]int64{"Unavailable": 2, "DeadlineExceeded": 1, "Unknown": 1}
	gotErr := s.Errors()
	if len(gotErr) != len(wantErr) {
		t.Errorf("Errors() = %v, want %v", gotErr, wantErr)
	}
	for k, v := range wantErr {
		if gotErr[k] != v {
			t.Errorf("Errors()[%q] = %d, want %d", k, gotErr[k], v)
		}
	}
	q := Quantiles(s.Hist)
	// 3 significant digits: values are exact to within 0.1%.
	tests := []struct {
		name      string
		got, want int64
	}{
		{"min", q.MinNS, 1000},
		{"p50", q.P50NS, 51000},
		{"p90", q.P90NS, 91000},
		{"p99", q.P99NS, 100000},
		{"max", q.P100NS, 500000},
	}
	for _, tc := range tests {
		if d := tc.got - tc.want; d < -tc.want/1000 || d > tc.want/1000 {
			t.Errorf("%s = %d, want %d ±0.1%%", tc.name, tc.got, tc.want)
		}
	}
}

func TestRecorderClampsAndResets(t *testing.T) {
	r := NewRecorder()
	r.Record(-5, codes.OK)
	r.Record(time.Hour, codes.OK)
	s := Merge(r)
	if got, want := s.Clamped, int64(1); got != want {
		t.Errorf("Clamped = %d, want %d", got, want)
	}
	if got := s.Hist.Max(); got < HighestTrackable*999/1000 {
		t.Errorf("max = %d, want about %d", got, HighestTrackable)
	}
	r.Reset()
	if got := Merge(r).Total(); got != 0 {
		t.Errorf("after Reset, Total() = %d, want 0", got)
	}
}

func TestQuantilesEmpty(t *testing.T) {
	if got := Quantiles(Merge().Hist); got != (Latency{}) {
		t.Errorf("Quantiles(empty) = %+v, want zero", got)
	}
}

func TestHistogramEncodingRoundTrip(t *testing.T) {
	r := NewRecorder()
	for i := 0; i < 1000; i++ {
		r.Record(time.Duration(20_000+i*37), codes.OK)
	}
	h := Merge(r).Hist
	enc, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	if enc[:8] != "HISTFAAA" {
		t.Errorf("encoding starts %q, want the V2 compressed prefix HISTFAAA", enc[:8])
	}
	back, err := DecodeHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equals(h) {
		t.Errorf("decoded histogram differs from the original")
	}
	for _, bad := range []string{"", "not base64!", "SElTVEZBQUE="} {
		if _, err := DecodeHistogram(bad); err == nil {
			t.Errorf("DecodeHistogram(%q) = nil error, want an error", bad)
		}
	}
}

// BenchmarkRecord measures the recording path: it must not allocate.
func BenchmarkRecord(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	d := 37 * time.Microsecond
	for i := 0; b.Loop(); i++ {
		r.Record(d+time.Duration(i&1023), codes.OK)
	}
}

// BenchmarkRecordError measures counting a failed RPC.
func BenchmarkRecordError(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		r.Record(time.Millisecond, codes.Unavailable)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := NewRecorder()
	if n := testing.AllocsPerRun(1000, func() { r.Record(42*time.Microsecond, codes.OK) }); n != 0 {
		t.Errorf("Record allocates %v times per call, want 0", n)
	}
}

func TestErrorSample(t *testing.T) {
	unimpl := status.Error(codes.Unimplemented, "unknown method Foo")
	unavail := status.Error(codes.Unavailable, "connection refused")
	tests := []struct {
		name   string
		record func(a, b *Recorder)
		want   string
	}{
		{"none", func(a, b *Recorder) { a.RecordErr(time.Millisecond, codes.OK, nil) }, ""},
		{"counted without a sample", func(a, b *Recorder) { a.Record(time.Millisecond, codes.Unavailable) }, ""},
		{"the first error is kept", func(a, b *Recorder) {
			a.RecordErr(time.Millisecond, codes.Unimplemented, unimpl)
			a.RecordErr(time.Millisecond, codes.Unimplemented, status.Error(codes.Unimplemented, "later"))
		}, "Unimplemented: unknown method Foo"},
		{"the most common code wins", func(a, b *Recorder) {
			a.RecordErr(time.Millisecond, codes.Unavailable, unavail)
			b.RecordErr(time.Millisecond, codes.Unimplemented, unimpl)
			b.RecordErr(time.Millisecond, codes.Unimplemented, unimpl)
		}, "Unimplemented: unknown method Foo"},
		{"a tie goes to the name that sorts first", func(a, b *Recorder) {
			a.RecordErr(time.Millisecond, codes.Unimplemented, unimpl)
			b.RecordErr(time.Millisecond, codes.Unavailable, unavail)
		}, "Unavailable: connection refused"},
		{"counts merge across recorders", func(a, b *Recorder) {
			a.RecordErr(time.Millisecond, codes.Unavailable, unavail)
			a.Record(time.Millisecond, codes.Unimplemented)
			b.RecordErr(time.Millisecond, codes.Unimplemented, unimpl)
		}, "Unimplemented: unknown method Foo"},
		{"the code is the caller's", func(a, b *Recorder) {
			a.RecordErr(time.Millisecond, codes.DeadlineExceeded, errors.New("cut off"))
		}, "DeadlineExceeded: cut off"},
		{"an OK code keeps no sample", func(a, b *Recorder) { a.RecordErr(time.Millisecond, codes.OK, unavail) }, ""},
		{"an empty message", func(a, b *Recorder) { a.RecordErr(time.Millisecond, codes.Internal, status.Error(codes.Internal, "")) }, "Internal"},
		{"a long message is cut", func(a, b *Recorder) {
			a.RecordErr(time.Millisecond, codes.Internal, status.Error(codes.Internal, strings.Repeat("é", MaxSampleBytes)))
		}, "Internal: " + strings.Repeat("é", MaxSampleBytes/2) + "..."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := NewRecorder(), NewRecorder()
			tc.record(a, b)
			if got := Merge(a, b).ErrorSample(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// The first recorder's sample is the merged one; Reset forgets it.
	a, b := NewRecorder(), NewRecorder()
	a.RecordErr(time.Millisecond, codes.Unavailable, unavail)
	b.RecordErr(time.Millisecond, codes.Unavailable, status.Error(codes.Unavailable, "b's"))
	if got, want := Merge(a, b).ErrorSample(), "Unavailable: connection refused"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	a.Reset()
	if got := Merge(a).ErrorSample(); got != "" {
		t.Errorf("after Reset, got %q, want none", got)
	}
}

func TestRecordErrDoesNotAllocate(t *testing.T) {
	r := NewRecorder()
	err := status.Error(codes.Unavailable, "connection refused")
	if n := testing.AllocsPerRun(1000, func() { r.RecordErr(time.Millisecond, codes.Unavailable, err) }); n != 0 {
		t.Errorf("RecordErr allocates %v times per call, want 0", n)
	}
}

// TestMergeHistograms: the sum of counts arrays holds exactly what
// hdrhistogram's bucket-by-bucket Merge does, for histograms of this
// package's geometry (empty ones among them), one of another geometry, and
// none; the sources are left unchanged.
func TestMergeHistograms(t *testing.T) {
	filled := func(vs ...int64) *hdrhistogram.Histogram {
		h := newHistogram()
		for _, v := range vs {
			_ = h.RecordValue(v)
		}
		return h
	}
	coarse := hdrhistogram.New(1, 1e9, 1)
	_ = coarse.RecordValue(12345)
	tests := []struct {
		name string
		hs   []*hdrhistogram.Histogram
	}{
		{"none", nil},
		{"empty", []*hdrhistogram.Histogram{newHistogram(), newHistogram()}},
		{"one", []*hdrhistogram.Histogram{filled(1, 1000, 5e9)}},
		{"several", []*hdrhistogram.Histogram{filled(1, 2, 3), newHistogram(), filled(999, 1e6, HighestTrackable), filled(3, 7e8)}},
		{"another geometry", []*hdrhistogram.Histogram{filled(40, 50), coarse}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := newHistogram()
			var before []int64
			for _, h := range tc.hs {
				want.Merge(h)
				before = append(before, h.TotalCount())
			}
			got := MergeHistograms(tc.hs...)
			if !got.Equals(want) || got.TotalCount() != want.TotalCount() || Quantiles(got) != Quantiles(want) {
				t.Errorf("got %d values %+v, want %d values %+v", got.TotalCount(), Quantiles(got), want.TotalCount(), Quantiles(want))
			}
			for i, h := range tc.hs {
				if h.TotalCount() != before[i] {
					t.Errorf("source %d: got %d values after the merge, want %d", i, h.TotalCount(), before[i])
				}
			}
		})
	}
}
