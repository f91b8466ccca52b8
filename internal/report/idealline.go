// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"slices"
	"sort"

	"github.com/rpclab/rpclab/internal/verdict"
)

// The reference lines the figures draw beside measured throughput: an open
// loop's offered rate, each closed-loop run's ideal line from its base
// step, and the speed-up chart's y = x.

// offeredLine is an open loop's ideal: throughput equal to the offered rate,
// over every rate any line tried.
func offeredLine(lines []*line) Series {
	seen := map[float64]bool{}
	var xs []float64
	for _, l := range lines {
		for _, r := range l.rows {
			if x := xOf(r.Rec); !seen[x] {
				seen[x] = true
				xs = append(xs, x)
			}
		}
	}
	sort.Float64s(xs)
	s := Series{Label: "offered rate", Color: -1, Dash: 1, Shape: -1}
	for _, x := range xs {
		s.Points = append(s.Points, Point{x, x})
	}
	return s
}

// runBases gives, per run, the step its ideal line and speed-up start
// from (verdict.Base of the run's rows). A run without one is absent.
func runBases(lines []*line) map[string]*verdict.Row {
	rows := map[string][]*verdict.Row{}
	for _, m := range lines {
		for i := range m.rows {
			rows[m.run] = append(rows[m.run], &m.rows[i])
		}
	}
	out := map[string]*verdict.Row{}
	for run, rs := range rows {
		if b := verdict.Base(rs); b != nil {
			out[run] = b
		}
	}
	return out
}

// runXs lists the in-flight counts of run's lines, ascending.
func runXs(lines []*line, run string) []float64 {
	var xs []float64
	seen := map[int]bool{}
	for _, m := range lines {
		if m.run != run {
			continue
		}
		for _, r := range m.rows {
			if n := r.Rec.Spec.Inflight; !seen[n] {
				seen[n] = true
				xs = append(xs, float64(n))
			}
		}
	}
	sort.Float64s(xs)
	return xs
}

// idealLines draws, per run, the ideal line: the throughput of the run's
// base step (runBases) times in-flight, over the run's in-flight counts.
func idealLines(lines []*line, bases map[string]*verdict.Row) []Series {
	var out []Series
	done := map[string]bool{}
	for _, l := range lines {
		if done[l.run] {
			continue
		}
		done[l.run] = true
		base := bases[l.run]
		if base == nil {
			continue
		}
		s := Series{Label: l.label("ideal (" + verdict.ConnLabel(base.Rec) + " at 1 × in-flight)"), Color: -1, Dash: 1, Shape: -1}
		for _, x := range runXs(lines, l.run) {
			s.Points = append(s.Points, Point{x, base.Rec.ThroughputRPS * x})
		}
		out = append(out, s)
	}
	return out
}

// speedupIdeal is the speed-up chart's one ideal line, y = x: every run's
// ideal line divided by its own base is the same line, over every in-flight
// count of the runs with a base.
func speedupIdeal(lines []*line, bases map[string]*verdict.Row) Series {
	s := Series{Label: "ideal (speed-up = in-flight)", Color: -1, Dash: 1, Shape: -1}
	var xs []float64
	for run := range bases {
		for _, x := range runXs(lines, run) {
			if !slices.Contains(xs, x) {
				xs = append(xs, x)
			}
		}
	}
	sort.Float64s(xs)
	for _, x := range xs {
		s.Points = append(s.Points, Point{x, x})
	}
	return s
}
