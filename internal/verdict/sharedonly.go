// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"fmt"
	"math"
	"sort"

	"github.com/rpclab/rpclab/internal/result"
)

// sharedOnly judges a group measured with the shared layout alone (YDB's
// published single-connection table, or a sweep run with --conn shared):
// how far one connection scaled from in-flight 1 to SharedOnlyInflight (or
// to the highest count measured, when the run stops below it). There is no
// second layout to compare with, so the verdict cannot call a connection
// bottleneck; it says what the curve means and what to measure next, and
// whether throughput fell past its peak (by more than Fall at the highest
// count). It needs a successful in-flight-1 step and one more in-flight
// count.
func sharedOnly(lang, rpc string, shared map[int]Row) (Verdict, bool) {
	one, ok := shared[1]
	if !ok || one.Rec.ThroughputRPS <= 0 {
		return Verdict{}, false
	}
	var counts []int
	for n, row := range shared {
		if n > 1 && row.IdealRPS > 0 {
			counts = append(counts, n)
		}
	}
	if len(counts) == 0 {
		return Verdict{}, false
	}
	sort.Ints(counts)
	n := counts[len(counts)-1]
	if _, has := shared[SharedOnlyInflight]; has && shared[SharedOnlyInflight].IdealRPS > 0 {
		n = SharedOnlyInflight
	}
	s := shared[n]
	v := Verdict{Kind: SharedOnly, Language: lang, RPC: rpc, Inflight: n, SharedEfficiency: s.Efficiency,
		Gain: s.Rec.ThroughputRPS / one.Rec.ThroughputRPS}
	v.Text = fmt.Sprintf("%s %s, shared only: at in-flight %d (%dx in-flight 1) one connection gave %.2fx the throughput of in-flight 1 (%.0f vs %.0f req/s), %.0f%% of its ideal line",
		lang, rpc, n, n, v.Gain, s.Rec.ThroughputRPS, one.Rec.ThroughputRPS, 100*s.Efficiency)
	if p1, pn := one.Rec.Latency.P50NS, s.Rec.Latency.P50NS; p1 > 0 && pn > 0 {
		v.Text += fmt.Sprintf("; P50 grew %.1fx (%.0f to %.0f µs)", float64(pn)/float64(p1), float64(p1)/1e3, float64(pn)/1e3)
	}
	v.head = v.Text
	const measure = "add connections (--conn shared,per-worker,pool:4; in C++, Python and Node local-pool or distinct-args, not channel-per-worker) and measure again: only a run with more than one connection can tell whether the connection is the limit."
	switch {
	case s.Efficiency < FlatEfficiency:
		v.Text += fmt.Sprintf(". One connection stopped scaling: %dx the in-flight RPCs for %.2fx the throughput, so latency grows about linearly with in-flight (in-flight over throughput, Little's law). That is the shape of a client connection bottleneck, and of a limit elsewhere (server, CPU, network) alike: ",
			n, v.Gain) + measure
	case s.Efficiency >= ScalingEfficiency:
		v.Text += ". One connection still scales at these counts: no bottleneck in sight; sweep higher in-flight counts, with more than one layout, to find where it stops."
	default:
		v.Text += ". One connection scales only part of the way: " + measure
	}
	peak, top := 1, counts[len(counts)-1]
	for _, c := range counts {
		if shared[c].Rec.ThroughputRPS > shared[peak].Rec.ThroughputRPS {
			peak = c
		}
	}
	if p, t := shared[peak].Rec.ThroughputRPS, shared[top].Rec.ThroughputRPS; peak < top && t < p*(1-Fall) {
		v.FellAt, v.Fell = peak, 1-t/p
		v.Text += fmt.Sprintf(" Past in-flight %d throughput fell: %.0f req/s at that peak, %.0f at in-flight %d (%.0f%% less), so more RPCs in flight on one connection cost throughput there.",
			peak, math.Round(p), math.Round(t), top, 100*v.Fell)
	}
	// The server's idle CPU means nothing when other work took the CPUs.
	if sc := s.Rec.ServerCPU; sc != nil && s.Efficiency < ScalingEfficiency && Busy([]*result.Record{one.Rec, s.Rec}) == nil {
		v.ServerBusy, v.ServerLayout = sc.Busy, ConnLabel(s.Rec)
		if sc.Busy >= ServerCPUBusy {
			v.Text += fmt.Sprintf(" At in-flight %d the server kept %.0f%% of its %d CPU%s busy: it may well be the limit itself.", n, 100*sc.Busy, sc.CPUs, plural(sc.CPUs))
		} else {
			v.Text += fmt.Sprintf(" At in-flight %d the server kept only %.0f%% of its %d CPU%s busy, so its CPU is not the limit (YDB's \"the server was idle\").", n, 100*sc.Busy, sc.CPUs, plural(sc.CPUs))
		}
	}
	return v, true
}
