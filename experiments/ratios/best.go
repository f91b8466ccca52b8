// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/verdict"
)

// bestRow is one (series, in-flight) position of a --best table: the
// candidate layout's median throughput and client CPU per RPC over the
// repeats, against the layout whose median throughput was the highest
// among the others.
type bestRow struct {
	series           string
	inflight         int
	n                int // repeats with an ok step of the candidate
	rps, cpu         float64
	best             string
	bestRPS, bestCPU float64
	bestN            int
	// The host's check: each side's median server CPU per RPC (µs, 0:
	// not measured) and median connections as the kernel saw them.
	srv, bestSrv     float64
	conns, bestConns float64
	// paired is the candidate's throughput over the best layout's in each
	// repeat (file) that measured both at this count, sorted: the two
	// measured in one process minutes apart, so a host that ran slower
	// for the whole repeat moves both.
	paired []float64
}

// median of xs; 0 for none.
func median(xs []float64) float64 {
	m, _ := stats.Median(xs)
	return m
}

// layoutKey is one (series, layout, in-flight) position of a --best table.
type layoutKey struct {
	series, layout string
	inflight       int
}

// layoutMedian is one position's median throughput and client CPU per RPC
// over the repeats with an ok step there, and how many there were; and its
// median server CPU per RPC (over the repeats that measured it; 0: none
// did) and connections as the kernel saw them.
type layoutMedian struct {
	rps, cpu   float64
	n          int
	srv, conns float64
}

// layoutMedians is every position's layoutMedian.
type layoutMedians map[layoutKey]layoutMedian

// medians treats every file as a repeat of one run and takes each
// position's medians over the repeats.
func medians(repeats [][]result.Record) layoutMedians {
	rps, cpu := map[layoutKey][]float64{}, map[layoutKey][]float64{}
	srv, conns := map[layoutKey][]float64{}, map[layoutKey][]float64{}
	for _, recs := range repeats {
		for i := range recs {
			r := &recs[i]
			if r.Status != result.StatusOK {
				continue
			}
			k := layoutKey{series(r), verdict.ConnLabel(r), r.Spec.Inflight}
			rps[k] = append(rps[k], r.ThroughputRPS)
			cpu[k] = append(cpu[k], r.ClientCPUNSPerRPC/1e3)
			conns[k] = append(conns[k], float64(r.ConnsObserved))
			if r.ServerCPU != nil && r.ServerCPU.CPUNSPerRPC > 0 {
				srv[k] = append(srv[k], r.ServerCPU.CPUNSPerRPC/1e3)
			}
		}
	}
	m := layoutMedians{}
	for k := range rps {
		m[k] = layoutMedian{rps: median(rps[k]), cpu: median(cpu[k]), n: len(rps[k]),
			srv: median(srv[k]), conns: median(conns[k])}
	}
	return m
}

// compareBest treats every file as a repeat of one run: at each in-flight
// count it takes each layout's median throughput and median client CPU per
// RPC over the repeats, and sets the candidate layout beside the best of
// the others (a layout label starting with candidate counts as it, so
// "pool:auto" matches "pool:auto:1:8").
func compareBest(repeats [][]result.Record, candidate string) ([]bestRow, error) {
	rows := map[[2]string]*bestRow{}
	var out []*bestRow
	for k, m := range medians(repeats) {
		pos := [2]string{k.series, strconv.Itoa(k.inflight)}
		row := rows[pos]
		if row == nil {
			row = &bestRow{series: k.series, inflight: k.inflight}
			rows[pos] = row
			out = append(out, row)
		}
		if strings.HasPrefix(k.layout, candidate) {
			row.n, row.rps, row.cpu, row.srv, row.conns = m.n, m.rps, m.cpu, m.srv, m.conns
		} else if m.rps > row.bestRPS {
			row.best, row.bestRPS, row.bestCPU, row.bestN = k.layout, m.rps, m.cpu, m.n
			row.bestSrv, row.bestConns = m.srv, m.conns
		}
	}
	var res []bestRow
	for _, r := range out {
		if r.n > 0 && r.bestRPS > 0 {
			r.paired = pairedRatios(repeats, *r, candidate)
			res = append(res, *r)
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("%w %q beside another layout", errNoBase, candidate)
	}
	slices.SortFunc(res, func(a, b bestRow) int {
		if c := strings.Compare(a.series, b.series); c != 0 {
			return c
		}
		return a.inflight - b.inflight
	})
	return res, nil
}

// pairedRatios is the candidate's throughput over row.best's in each
// repeat with an ok step of both at row's count, sorted.
func pairedRatios(repeats [][]result.Record, row bestRow, candidate string) []float64 {
	var out []float64
	for _, recs := range repeats {
		var own, best float64
		for i := range recs {
			r := &recs[i]
			if r.Status != result.StatusOK || r.Spec.Inflight != row.inflight || series(r) != row.series {
				continue
			}
			switch l := verdict.ConnLabel(r); {
			case strings.HasPrefix(l, candidate):
				own = r.ThroughputRPS
			case l == row.best:
				best = r.ThroughputRPS
			}
		}
		if own > 0 && best > 0 {
			out = append(out, own/best)
		}
	}
	slices.Sort(out)
	return out
}

// pairedText is the paired ratios' median and range, or "-" for none.
func pairedText(p []float64) string {
	switch len(p) {
	case 0:
		return "-"
	case 1:
		return fmt.Sprintf("%.2f", p[0])
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)", median(p), p[0], p[len(p)-1])
}

// sections prints one tab-aligned table per series, each under its title.
type sections struct {
	w    io.Writer
	last string
	tw   *tabwriter.Writer
}

// next reports whether series starts a new table: then it ends the one
// before, prints title and a new table begins.
func (s *sections) next(series, title string) bool {
	if s.tw != nil && series == s.last {
		return false
	}
	if s.tw != nil {
		s.tw.Flush()
		fmt.Fprintln(s.w)
	}
	fmt.Fprintln(s.w, title)
	s.tw, s.last = tabwriter.NewWriter(s.w, 0, 0, 2, ' ', 0), series
	return true
}

// end flushes the last table.
func (s *sections) end() {
	if s.tw != nil {
		s.tw.Flush()
	}
}

// printBest prints the candidate against the best other layout at each
// count, and whether it holds the bar there (holds); then the host's check
// (hostCheck), and the ratio paired within each repeat (its median and
// range), a second view of the same runs beside the bar's, not the bar.
func printBest(w io.Writer, rows []bestRow, candidate string, bar, cpuBar float64) {
	out := &sections{w: w}
	for _, r := range rows {
		if out.next(r.series, fmt.Sprintf("%s: %s against the best other layout, medians over the repeats", r.series, candidate)) {
			fmt.Fprintf(out.tw, "inflight\t%s req/s\tcpu µs/rpc\tbest other\treq/s\tcpu µs/rpc\tthroughput x\tcpu x\trepeats\tholds %.2fx at most %.2fx CPU\tconns\tserver cpu x\tpaired x\n", candidate, bar, cpuBar)
		}
		tp, c := r.rps/r.bestRPS, cpuRatio(r.cpu, r.bestCPU)
		held := "no"
		if holds(tp, c, bar, cpuBar) {
			held = "yes"
		}
		srv := "-"
		if s := cpuRatio(r.srv, r.bestSrv); s > 0 {
			srv = fmt.Sprintf("%.2f", s)
		}
		fmt.Fprintf(out.tw, "%d\t%.0f\t%.1f\t%s\t%.0f\t%.1f\t%.2f\t%.2f\t%d/%d\t%s\t%g/%g\t%s%s\t%s\n", r.inflight, r.rps, r.cpu, r.best,
			r.bestRPS, r.bestCPU, tp, c, r.n, r.bestN, held, r.conns, r.bestConns, srv, hostCheck(r, bar, cpuBar), pairedText(r.paired))
	}
	out.end()
}

// SlowHost is how much more server CPU per RPC the candidate's windows
// may have taken than the best layout's, at the same connections, before
// the host's check calls a miss the host's: the server's work per RPC does
// not depend on how the client sized its pool, only on how many
// connections carry the RPCs (and the host's speed).
const SlowHost = 1.1

// hostCheck marks a count where the candidate missed the bar while it held
// as many connections as the best layout (the medians of conns_observed)
// and the server spent more than SlowHost its CPU per RPC there: the same
// layout, measured minutes apart, on a host that ran slower for the
// candidate's windows. It is a note beside the figure, not a change to it.
func hostCheck(r bestRow, bar, cpuBar float64) string {
	if holds(r.rps/r.bestRPS, cpuRatio(r.cpu, r.bestCPU), bar, cpuBar) || r.conns != r.bestConns || r.conns <= 0 {
		return ""
	}
	if s := cpuRatio(r.srv, r.bestSrv); s > SlowHost {
		return " (same size, slower host)"
	}
	return ""
}

// eachRow is one layout of one series in a --best run's noise table: its
// median throughput over the best median of the other layouts at each
// in-flight count, the candidate left out of the others, and its median
// client CPU per RPC over that layout's, so that a fixed layout faces the
// bar the candidate faces.
type eachRow struct {
	series, layout string
	inflight       []int
	ratio          []float64 // 0 where the layout has no ok step
	cpu            []float64 // 0 where either side's CPU is unknown
}

// holds reports whether a layout measured at throughput ratio r and CPU
// per RPC ratio c against the best of the other layouts holds the bar: at
// least bar of the best layout's throughput at no more than cpuBar its
// CPU per RPC. A layout that out-carried every other one is the best
// layout itself, which the bar compares it with: it holds whatever its
// CPU per RPC against the runner-up.
func holds(r, c, bar, cpuBar float64) bool {
	return r >= 1 || (r >= bar && c > 0 && c <= cpuBar)
}

// cpuRatio is a layout's CPU per RPC over the best layout's, or 0 when
// either is unknown (0: no CPU measured).
func cpuRatio(own, best float64) float64 {
	if own > 0 && best > 0 {
		return own / best
	}
	return 0
}

// held counts the in-flight counts at which the row holds the bar.
func (e eachRow) held(bar, cpuBar float64) int {
	n := 0
	for i, r := range e.ratio {
		if holds(r, e.cpu[i], bar, cpuBar) {
			n++
		}
	}
	return n
}

// compareEach sets every layout, the candidate too, beside the best of the
// other layouts but the candidate at each in-flight count, medians over the
// repeats: how often the fixed layouts themselves hold the bar the
// candidate is held to shows how much of a miss is the comparison's own
// noise (the best of several noisy medians is biased upwards).
func compareEach(repeats [][]result.Record, candidate string) []eachRow {
	m := medians(repeats)
	type sl struct{ series, layout string }
	counts := map[string]map[int]bool{}
	layouts := map[sl]bool{}
	for k := range m {
		if counts[k.series] == nil {
			counts[k.series] = map[int]bool{}
		}
		counts[k.series][k.inflight] = true
		layouts[sl{k.series, k.layout}] = true
	}
	var out []eachRow
	for l := range layouts {
		row := eachRow{series: l.series, layout: l.layout}
		for _, n := range slices.Sorted(maps.Keys(counts[l.series])) {
			var best layoutMedian
			for o := range layouts {
				if o.series != l.series || o.layout == l.layout || strings.HasPrefix(o.layout, candidate) {
					continue
				}
				if om := m[layoutKey{o.series, o.layout, n}]; om.rps > best.rps {
					best = om
				}
			}
			own := m[layoutKey{l.series, l.layout, n}]
			r, c := 0.0, cpuRatio(own.cpu, best.cpu)
			if best.rps > 0 {
				r = own.rps / best.rps
			}
			row.inflight, row.ratio, row.cpu = append(row.inflight, n), append(row.ratio, r), append(row.cpu, c)
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b eachRow) int {
		if c := strings.Compare(a.series, b.series); c != 0 {
			return c
		}
		return strings.Compare(a.layout, b.layout)
	})
	return out
}

// printEach prints the noise table: each layout's throughput ratio, its
// CPU per RPC ratio in brackets, and at how many counts it held the bar
// (a "*" marks a count where it did not).
func printEach(w io.Writer, rows []eachRow, candidate string, bar, cpuBar float64) {
	out := &sections{w: w}
	for _, r := range rows {
		title := fmt.Sprintf("%s: each layout against the best of the others but %s, medians over the repeats, CPU per RPC x in brackets (the bar's own noise)", r.series, candidate)
		if out.next(r.series, title) {
			fmt.Fprint(out.tw, "layout")
			for _, n := range r.inflight {
				fmt.Fprintf(out.tw, "\t%d", n)
			}
			fmt.Fprintf(out.tw, "\tholds %.2fx at most %.2fx CPU\n", bar, cpuBar)
		}
		fmt.Fprint(out.tw, r.layout)
		for i, x := range r.ratio {
			switch {
			case x <= 0:
				fmt.Fprint(out.tw, "\t-")
			case r.cpu[i] > 0:
				fmt.Fprintf(out.tw, "\t%.2f (%.2f)", x, r.cpu[i])
			default:
				fmt.Fprintf(out.tw, "\t%.2f (-)", x)
			}
			if x > 0 && !holds(x, r.cpu[i], bar, cpuBar) {
				fmt.Fprint(out.tw, "*")
			}
		}
		fmt.Fprintf(out.tw, "\t%d of %d\n", r.held(bar, cpuBar), len(r.ratio))
	}
	out.end()
}
