// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package benchwire

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/rpclab/rpclab/internal/testutil"
)

// TestGeometry: the driver's buckets are gRPC's C++ histogram's, bucket
// i = floor(ln(v)/ln(1+resolution)), values clamped to [1, max_possible].
func TestGeometry(t *testing.T) {
	g := Geometry{Resolution: 0.01, MaxPossible: 60e9}
	if got := g.Buckets(); got != 2495 {
		t.Errorf("got %d buckets for 1%% up to 60 s, want 2495", got)
	}
	for _, tc := range []struct {
		v    float64
		want int
	}{{0, 0}, {1, 0}, {1.0099, 0}, {1.0101, 1}, {1000, 694}, {1e6, 1388}, {1e12, 2494}} {
		if got := g.BucketOf(tc.v); got != tc.want {
			t.Errorf("BucketOf(%v): got %d, want %d", tc.v, got, tc.want)
		}
	}
	if got := g.BucketStart(694); got > 1000 || g.BucketStart(695) <= 1000 {
		t.Errorf("bucket 694 starts at %v and 695 at %v, want 1000 between them", got, g.BucketStart(695))
	}
}

// TestHistogramData converts an HDR histogram into the driver's buckets:
// counts land in the bucket of their value, min and max are exact, the sum
// is within the HDR resolution.
func TestHistogramData(t *testing.T) {
	g := Geometry{Resolution: 0.01, MaxPossible: 60e9}
	h := hdrhistogram.New(1, int64(100*time.Second), 3)
	for _, v := range []int64{1000, 1000, 1000, 1_000_000} {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	d := g.HistogramData(h)
	if d.Bucket[694] != 3 || d.Bucket[1388] != 1 || d.Count != 4 || testutil.BucketSum(d) != 4 {
		t.Errorf("got buckets 694: %d, 1388: %d, count %v, sum of buckets %d; want 3, 1, 4, 4", d.Bucket[694], d.Bucket[1388], d.Count, testutil.BucketSum(d))
	}
	if d.MinSeen != 1000 || d.MaxSeen < 1_000_000 || d.MaxSeen > 1_001_000 {
		t.Errorf("got min %v, max %v; want 1000 and 1e6 (within 0.1%%)", d.MinSeen, d.MaxSeen)
	}
	if want := 1_003_000.0; d.Sum < want*0.999 || d.Sum > want*1.001 {
		t.Errorf("got sum %v, want %v within 0.1%%", d.Sum, want)
	}
	if e := g.HistogramData(hdrhistogram.New(1, 10, 1)); e.Count != 0 || len(e.Bucket) != 2495 {
		t.Errorf("empty: got count %v with %d buckets, want 0 with 2495", e.Count, len(e.Bucket))
	}
}
