// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package benchwire holds what rpclab's benchmark worker and driver agree
// on beyond the messages of gRPC's WorkerService (proto/benchpb): the
// driver's histogram geometry, in which workers report latencies, and the
// channel args through which rpclab's worker takes a connection layout, a
// per-RPC timeout and an arrival process. Other stacks' workers ignore the
// args and use the same geometry.
package benchwire

import (
	"fmt"
	"math"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpclab/rpclab/internal/stats"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// Defaults of the driver's histogram geometry when histogram_params is
// absent: gRPC's QPS driver's own (1% buckets, up to 60 s).
const (
	DefaultResolution  = 0.01
	DefaultMaxPossible = 60e9
)

// maxBuckets bounds the driver's geometry (1% buckets up to 60 s are 2,495).
const maxBuckets = 1 << 20

// Geometry is the driver's bucket layout: bucket i holds values (in
// nanoseconds) in [m^i, m^(i+1)) with m = 1+Resolution, values below 1 in
// bucket 0, values above MaxPossible in the last bucket, as gRPC's C++
// histogram does.
type Geometry struct {
	Resolution  float64
	MaxPossible float64
}

// GeometryOf reads histogram_params (nil: the defaults); an error names
// the impossible field.
func GeometryOf(p *pb.HistogramParams) (Geometry, error) {
	g := Geometry{Resolution: DefaultResolution, MaxPossible: DefaultMaxPossible}
	if p != nil {
		g = Geometry{Resolution: p.GetResolution(), MaxPossible: p.GetMaxPossible()}
	}
	if !(g.Resolution > 0) || !(g.MaxPossible >= 1) || math.IsInf(g.MaxPossible, 0) {
		return g, fmt.Errorf("histogram_params: resolution %v, max_possible %v: want resolution > 0 and max_possible >= 1", g.Resolution, g.MaxPossible)
	}
	// Counted in floating point: a tiny resolution needs more buckets than
	// an int holds (or infinitely many), and the error must say so truly.
	if n := math.Floor(math.Log(g.MaxPossible)/math.Log1p(g.Resolution)) + 1; !(n <= maxBuckets) {
		return g, fmt.Errorf("histogram_params: resolution %v up to %v needs %s buckets, more than %d", g.Resolution, g.MaxPossible, countOf(n), maxBuckets)
	}
	return g, nil
}

// countOf spells a count that may be past any int: "2.5e+301", or
// "infinitely many".
func countOf(n float64) string {
	if math.IsInf(n, 0) || math.IsNaN(n) {
		return "infinitely many"
	}
	return strconv.FormatFloat(n, 'g', 3, 64)
}

// Buckets is the number of buckets.
func (g Geometry) Buckets() int { return g.BucketOf(g.MaxPossible) + 1 }

// BucketOf is the bucket of value v (clamped to [1, MaxPossible]).
func (g Geometry) BucketOf(v float64) int {
	v = min(max(v, 1), g.MaxPossible)
	return int(math.Log(v) / math.Log1p(g.Resolution))
}

// BucketStart is the lowest value of bucket i.
func (g Geometry) BucketStart(i int) float64 { return math.Pow(1+g.Resolution, float64(i)) }

// HistogramData converts h (nanoseconds) into the driver's geometry. Each
// HDR bucket (values equal to within 0.1%) lands in the driver's bucket of
// its midpoint, so a count can move to the neighbouring bucket only when an
// HDR bucket straddles a boundary; min and max are exact; the sum and sum
// of squares take each HDR bucket at its midpoint (within 0.1%).
func (g Geometry) HistogramData(h *hdrhistogram.Histogram) *pb.HistogramData {
	d := &pb.HistogramData{Bucket: make([]uint32, g.Buckets())}
	if h.TotalCount() == 0 {
		return d
	}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		mid := float64(b.From+b.To) / 2
		d.Bucket[g.BucketOf(mid)] += uint32(b.Count)
		d.Sum += mid * float64(b.Count)
		d.SumOfSquares += mid * mid * float64(b.Count)
	}
	d.Count = float64(h.TotalCount())
	d.MinSeen, d.MaxSeen = float64(h.Min()), float64(h.Max())
	return d
}

// ToHDR converts the driver's bucket histogram into rpclab's HDR
// geometry: each bucket's count at the bucket's midpoint, kept within the
// seen min and max. It returns the bound on the relative error of each
// value so placed (half the resolution).
func (g Geometry) ToHDR(d *pb.HistogramData) (*hdrhistogram.Histogram, float64) {
	h := stats.Merge().Hist
	for i, c := range d.GetBucket() {
		if c == 0 {
			continue
		}
		v := (g.BucketStart(i) + g.BucketStart(i+1)) / 2
		v = min(max(v, d.GetMinSeen()), d.GetMaxSeen())
		iv := min(max(int64(v), stats.LowestDiscernible), stats.HighestTrackable)
		_ = h.RecordValues(iv, int64(c)) // in range by construction
	}
	return h, g.Resolution / 2
}
