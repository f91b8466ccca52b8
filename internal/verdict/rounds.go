// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"slices"
	"sort"
)

// MinRounds: a ratio measured in interleaved rounds (the same two layouts
// at the same in-flight count, in the order A B B A ...) is settled once
// it has this many rounds and their range lies wholly on one side of
// BottleneckRatio (Settled). Three is the fewest whose range says
// anything about the spread: two rounds are one difference.
const MinRounds = 3

// roundKey is one layout at one in-flight count.
type roundKey struct {
	conn string
	n    int
}

// collapse folds repeated steps of one layout at one in-flight count
// (rounds) into one row, the one of median throughput (the lower middle
// of an even count), and returns each layout's throughputs at each count
// in record order, so that the i-th of two layouts pair as round i.
func collapse(rows []Row) ([]Row, map[roundKey][]float64) {
	byKey := map[roundKey][]Row{}
	var order []roundKey
	for _, row := range rows {
		k := roundKey{ConnLabel(row.Rec), row.Rec.Spec.Inflight}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], row)
	}
	out := make([]Row, 0, len(order))
	rounds := map[roundKey][]float64{}
	for _, k := range order {
		rs := byKey[k]
		for _, r := range rs {
			rounds[k] = append(rounds[k], r.Rec.ThroughputRPS)
		}
		sorted := slices.Clone(rs)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Rec.ThroughputRPS < sorted[j].Rec.ThroughputRPS })
		out = append(out, sorted[(len(sorted)-1)/2])
	}
	return out, rounds
}

// ratioRounds sets v's Ratio, RatioLow, RatioHigh and Rounds from the
// rounds of Best and shared at v.Inflight: the i-th step of each pairs as
// round i; the ratio is their median (of an even count, the mean of the
// middle two). Fewer than two rounds leave v
// as it is.
func ratioRounds(v *Verdict, rounds map[roundKey][]float64) {
	s, b := rounds[roundKey{"shared", v.Inflight}], rounds[roundKey{v.Best, v.Inflight}]
	k := min(len(s), len(b))
	if k < 2 {
		return
	}
	ratios := make([]float64, 0, k)
	for i := range k {
		if s[i] > 0 {
			ratios = append(ratios, b[i]/s[i])
		}
	}
	if len(ratios) < 2 {
		return
	}
	slices.Sort(ratios)
	k = len(ratios)
	v.Rounds, v.RatioLow, v.RatioHigh = k, ratios[0], ratios[k-1]
	v.Ratio = (ratios[(k-1)/2] + ratios[k/2]) / 2
}

// Settled says whether v's ratio, measured in rounds, needs no more of
// them: at least MinRounds, their range wholly at or above
// BottleneckRatio or wholly below it.
func Settled(v Verdict) bool {
	return v.Rounds >= MinRounds && (v.RatioLow >= BottleneckRatio || v.RatioHigh < BottleneckRatio)
}

// Noise is half the range of v's round ratios over their median, as a
// share: how far this host's steps moved the same comparison (0 without
// rounds).
func Noise(v Verdict) float64 {
	if v.Rounds < 2 || v.Ratio <= 0 {
		return 0
	}
	return (v.RatioHigh - v.RatioLow) / 2 / v.Ratio
}
