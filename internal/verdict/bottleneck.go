// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
)

// Verdict says whether the client's connection layout limits throughput, for
// one group of records (same client, target, RPC kind and payload).
type Verdict struct {
	Kind     Kind
	Language string
	RPC      string
	// Inflight is the in-flight count the layouts were compared at.
	Inflight int
	// Ratio is the best multi-connection throughput over shared's.
	Ratio float64
	// Best names the best multi-connection layout.
	Best string
	// Gain is a SharedOnly verdict's throughput at Inflight over its
	// throughput at in-flight 1.
	Gain float64
	// SharedEfficiency is shared's throughput over its ideal line;
	// BestEfficiency is Best's (0 when there is no in-flight-1 step).
	SharedEfficiency, BestEfficiency float64
	// Conns is the advised number of connections for a
	// connection-bottleneck verdict, by Advise's rule (Enough names that
	// layout).
	Conns  int
	Enough string
	// PeakInflight and PeakRatio: when the verdict is not a connection
	// bottleneck, the lower in-flight count where more connections did
	// give at least BottleneckRatio times shared's throughput (the
	// largest such ratio), if any: one connection was the limit there,
	// before something else capped every layout.
	PeakInflight int
	PeakRatio    float64
	// RatioLow and RatioHigh: the range of Best's throughput over
	// shared's at Inflight over Rounds interleaved rounds (Ratio is then
	// the median round's); Rounds is 0 when each layout was measured once
	// there.
	RatioLow, RatioHigh float64
	Rounds              int
	// Growing: Best's throughput at Inflight over its own at the next
	// lower compared in-flight count, when at least Growth and Best pulled
	// further ahead of shared there (0 otherwise): the climb ended while
	// more connections still gained, so a verdict that is not a
	// connection bottleneck says it is not settled.
	Growing float64
	// ClientBusy is the larger share of the client's CPUs that shared or
	// Best kept busy at Inflight (0 when the records have no CPU time);
	// BusyLayout names that layout.
	ClientBusy float64
	BusyLayout string
	// ServerBusy is the larger share of the server's CPUs kept busy under
	// shared or Best at Inflight, ServerLayout names that layout; both
	// are zero when the records do not carry the server's CPU.
	ServerBusy   float64
	ServerLayout string
	// FellAt and Fell: a SharedOnly verdict's throughput peak, when the
	// run went on past it and its highest in-flight count lost more than
	// Fall of the peak's throughput: the peak's in-flight count and the
	// share lost (0 and 0 when it did not fall).
	FellAt int
	Fell   float64
	// Trapped names the layout of a Trap verdict, with the connections it
	// asked for (Requested) and those the OS saw (Observed).
	Trapped             string
	Requested, Observed int
	// Busy is what other work took from the group's steps when it took
	// more than OtherWorkShare of some of their CPUs (nil otherwise): the
	// Kind is then BusyHost (a Trap stays a Trap), Rule is the kind the
	// rules gave, and Text says so first.
	Busy *HostLoad
	Rule Kind
	Text string
	// head is what was measured, before any rule's conclusion.
	head string
}

// Verdicts judges every group of records (same client, target, service,
// method, RPC kind and payload: records of different targets or methods
// are judged apart, never mixed in one verdict) that has a shared layout and at least one
// multi-connection layout at a common in-flight count, or the shared
// layout alone.
func Verdicts(recs []result.Record) []Verdict {
	type key struct {
		lang, target, service, call, rpc string
		payload                          int
	}
	groups := map[key][]Row{}
	var order []key
	for _, row := range Rows(recs) {
		r := row.Rec
		// An open loop's throughput is its offered rate: comparing it
		// between layouts says nothing. Its charts compare latency.
		if !clean(r) || IsOpen(r) {
			continue
		}
		k := key{r.Env.Language, TargetLabel(r), Service(r), r.Spec.Call, r.Spec.RPC, r.Spec.PayloadBytes}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], row)
	}
	var out []Verdict
	for _, k := range order {
		v, ok := judge(k.lang, callName(k.rpc, k.call), groups[k])
		if !ok {
			continue
		}
		if b := Busy(recsOf(groups[k])); b != nil {
			v = onBusyHost(v, b)
		}
		out = append(out, v)
	}
	return out
}

// callName is what a verdict names as the RPC measured: the RPC kind, and
// the method when the records called one (--call) instead of the ping.
func callName(rpc, call string) string {
	if call == "" {
		return rpc
	}
	return rpc + " " + call
}

func recsOf(rows []Row) []*result.Record {
	out := make([]*result.Record, len(rows))
	for i, r := range rows {
		out[i] = r.Rec
	}
	return out
}

// judge classifies a group's layouts by the connections the operating
// system saw (Conns): shared, multi-connection, and trapped (asked for more
// than the OS saw); judgeMulti compares shared with the layouts that had
// more than one connection, and a trapped layout makes the verdict a Trap.
func judge(lang, rpc string, rows []Row) (Verdict, bool) {
	rows, rounds := collapse(rows)
	shared := map[int]Row{}
	multi := map[int][]Row{}
	traps := map[int][]Row{}
	others := false
	for _, row := range rows {
		r := row.Rec
		n := r.Spec.Inflight
		if r.Spec.ConnsRequested <= 1 {
			if r.Spec.ConnMode == "shared" {
				shared[n] = row
			} else {
				others = true
			}
			continue
		}
		others = true
		if Trapped(r) {
			traps[n] = append(traps[n], row)
		}
		if Conns(r) > 1 {
			multi[n] = append(multi[n], row)
		}
	}
	if !others {
		return sharedOnly(lang, rpc, shared)
	}
	v, ok := judgeMulti(lang, rpc, shared, multi, rounds)
	if ok && restsOnIdleCPU(v.Kind) && v.head != "" && Busy(recsOf(rows)) != nil {
		v.Text = v.head + "." // a trap quotes it: no rule on idle CPU of a busy host
	}
	tn := 0
	for n := range traps {
		if _, has := shared[n]; has && n > tn {
			tn = n
		}
	}
	if tn == 0 {
		// No shared step beside the trap (YDB's original client alone):
		// the trap is judged at its highest in-flight count.
		for n := range traps {
			tn = max(tn, n)
		}
	}
	if tn == 0 {
		return v, ok
	}
	return trap(lang, rpc, shared[tn], traps[tn], v, ok), true
}

// A105Note says that gRPC's connection scaling does not remove the
// bottleneck the trap hides (the trap verdict and the README say so): it
// opens a second connection only at the server's stream limit, and the
// bottleneck shows with streams far below it (inflight of them here).
func A105Note(inflight int) string {
	return fmt.Sprintf("gRPC's connection scaling (gRFC A105, max_connections_per_subchannel) does not remove this bottleneck: "+
		"it opens a second connection only when one reaches the server's MAX_CONCURRENT_STREAMS (often 100; unlimited by default in grpc-go's server), "+
		"and the bottleneck shows far below that limit (here at %d stream%s in flight).", inflight, plural(inflight))
}

// trap words the verdict on a group where a layout at in-flight n got
// fewer connections than it asked for: the cause, the fix, and what the
// layouts that did get their connections showed (v, when ok).
func trap(lang, rpc string, s Row, trapped []Row, v Verdict, ok bool) Verdict {
	t := trapped[0]
	for _, r := range trapped[1:] {
		if r.Rec.Spec.ConnsRequested-r.Rec.ConnsObserved > t.Rec.Spec.ConnsRequested-t.Rec.ConnsObserved {
			t = r
		}
	}
	r := t.Rec
	out := Verdict{Kind: Trap, Language: lang, RPC: rpc, Inflight: r.Spec.Inflight, Trapped: ConnLabel(r),
		Requested: r.Spec.ConnsRequested, Observed: r.ConnsObserved}
	than := ""
	if s.Rec != nil && s.Rec.ThroughputRPS > 0 {
		out.Ratio = r.ThroughputRPS / s.Rec.ThroughputRPS
		than = fmt.Sprintf(" (%.2fx shared's throughput)", out.Ratio)
	}
	out.Text = fmt.Sprintf("%s %s, in-flight %d: the trap: %s asked for %d connections but the OS saw %d, so it measured %d connection%s, not %d%s: %s %s",
		lang, rpc, r.Spec.Inflight, out.Trapped, out.Requested, out.Observed, out.Observed, plural(out.Observed), out.Requested, than, TrapWhy(r), A105Note(r.Spec.Inflight))
	if ok {
		out.Text += " Among the layouts that got their connections: " + v.Text
		out.Conns, out.Enough, out.Best = v.Conns, v.Enough, v.Best
	}
	return out
}

// judgeMulti compares shared with the multi-connection layouts at the
// highest in-flight count they share.
func judgeMulti(lang, rpc string, shared map[int]Row, multi map[int][]Row, rounds map[roundKey][]float64) (Verdict, bool) {
	var common []int
	for n := range shared {
		if len(multi[n]) > 0 {
			common = append(common, n)
		}
	}
	if len(common) == 0 {
		return Verdict{}, false
	}
	sort.Ints(common)
	n := common[len(common)-1]
	c := comparison{lang: lang, n: n, counts: len(common), s: shared[n], best: bestAt(multi[n], n, rounds)}
	v := Verdict{Language: lang, RPC: rpc, Inflight: n, Best: ConnLabel(c.best.Rec),
		SharedEfficiency: c.s.Efficiency, BestEfficiency: c.best.Efficiency}
	if c.s.Rec.ThroughputRPS > 0 {
		v.Ratio = c.best.Rec.ThroughputRPS / c.s.Rec.ThroughputRPS
	}
	ratioRounds(&v, rounds)
	cands := make([]*result.Record, len(multi[n]))
	for i, r := range multi[n] {
		cands[i] = r.Rec
	}
	_, c.enough = Advise(cands)
	v.Conns, v.Enough = Conns(c.enough), ConnLabel(c.enough)
	c.head = headline(&v, rpc, c)
	v.head = c.head
	c.busy = c.s
	if ClientBusy(c.best.Rec) > ClientBusy(c.s.Rec) {
		c.busy = c.best
	}
	v.ClientBusy, v.BusyLayout = ClientBusy(c.busy.Rec), ConnLabel(c.busy.Rec)
	// A ratio above the threshold must hold at the next lower in-flight too.
	if len(common) >= 2 {
		c.prevN = common[len(common)-2]
		c.prevRatio = bestRatio(shared[c.prevN], multi[c.prevN])
	}
	if c.prevN > 0 && v.Ratio > c.prevRatio {
		v.Growing = grewFrom(c.best.Rec, multi[c.prevN])
	}
	noisy := decide(&v, c)
	// A lower count's gain is one pair of steps: not said where the rounds
	// showed this host's noise to be larger than the threshold's margin.
	if v.Kind != ConnBottleneck && !noisy {
		peakNote(&v, common[:len(common)-1], shared, multi)
	}
	return v, true
}

// comparison is what judgeMulti compares at one in-flight count n: shared
// (s), the best multi-connection layout, the fewest connections near it
// (enough), the layout whose client was busier, and the next lower count
// both reached with the best ratio there.
type comparison struct {
	lang             string
	n, prevN, counts int
	prevRatio        float64
	s, best, busy    Row
	enough           *result.Record
	head             string
}

// bestAt is the best layout at n: the highest throughput among those
// measured in the most rounds at n, so that a ratio measured in rounds is
// the one judged.
func bestAt(rows []Row, n int, rounds map[roundKey][]float64) Row {
	roundsOf := func(r Row) int { return len(rounds[roundKey{ConnLabel(r.Rec), n}]) }
	best := rows[0]
	for _, r := range rows[1:] {
		if roundsOf(r) > roundsOf(best) || (roundsOf(r) == roundsOf(best) && r.Rec.ThroughputRPS > best.Rec.ThroughputRPS) {
			best = r
		}
	}
	return best
}

// headline words what was compared: the layouts, the count, the ratio (with
// its range over rounds) and each side's share of its ideal line.
func headline(v *Verdict, rpc string, c comparison) string {
	lang, n, s, best := c.lang, c.n, c.s, c.best
	head := fmt.Sprintf("%s %s, in-flight %d: %s gave %.2fx the throughput of one shared connection (%.0f vs %.0f req/s)",
		lang, rpc, n, v.Best, v.Ratio, best.Rec.ThroughputRPS, s.Rec.ThroughputRPS)
	if v.Rounds >= 2 {
		head = fmt.Sprintf("%s %s, in-flight %d: %s gave %.2fx, %.2f-%.2f over %d rounds, the throughput of one shared connection (%.0f vs %.0f req/s, the median steps)",
			lang, rpc, n, v.Best, v.Ratio, v.RatioLow, v.RatioHigh, v.Rounds, best.Rec.ThroughputRPS, s.Rec.ThroughputRPS)
	}
	if s.IdealRPS > 0 {
		head += fmt.Sprintf("; shared reached %.0f%% of its ideal line", 100*s.Efficiency)
		if best.IdealRPS > 0 {
			head += fmt.Sprintf(", %s %.0f%%", v.Best, 100*best.Efficiency)
		}
	}
	if best.Rec.ConnsObserved <= 0 || c.enough.ConnsObserved <= 0 {
		head += "; connections counted as requested (the OS count was not read)"
	}
	return head
}

// decide sets v's kind and text from the comparison, and reports whether
// the rounds showed the host's noise to be larger than the threshold's
// margin.
func decide(v *Verdict, c comparison) (noisy bool) {
	s, best, head, prevN, prevRatio := c.s, c.best, c.head, c.prevN, c.prevRatio
	hasIdeal := s.IdealRPS > 0 && best.IdealRPS > 0
	unconfirmed := v.Ratio >= BottleneckRatio && prevN > 0 && prevRatio < BottleneckRatio &&
		!(hasIdeal && s.Efficiency < FlatEfficiency && best.Efficiency >= ScalingEfficiency)
	called := v.Ratio >= BottleneckRatio || (hasIdeal && s.Efficiency < FlatEfficiency && best.Efficiency >= ScalingEfficiency)
	// Rounds at n confirm the ratio by repetition: the call needs their
	// whole range at or above the threshold, and a range across it is the
	// host's noise.
	noisy = v.Rounds >= 2 && v.RatioLow < BottleneckRatio && v.RatioHigh >= BottleneckRatio
	if v.Rounds >= 2 {
		unconfirmed, called = false, v.RatioLow >= BottleneckRatio
	}
	switch {
	case noisy:
		v.Kind = Inconclusive
		v.Text = head + fmt.Sprintf(". Inconclusive: the layouts differ by less than this host's noise (%.0f%%): over %d rounds the ratio ranged %.2f-%.2fx, across the %.1fx line; more rounds (a longer budget) or a quieter host would settle it.",
			100*Noise(*v), v.Rounds, v.RatioLow, v.RatioHigh, BottleneckRatio)
	case called && c.counts < MinInflights:
		v.Kind = Inconclusive
		v.Text = head + fmt.Sprintf(". Inconclusive: needs both layouts measured at %d in-flight counts at least to call a bottleneck (this run has in-flight %d only); sweep more in-flight counts.", MinInflights, c.n)
	case unconfirmed:
		v.Kind = Inconclusive
		v.Text = head + fmt.Sprintf(". But at in-flight %d the best ratio was only %.2fx: one pair of steps is not enough on a noisy machine; repeat the sweep or measure at more in-flight counts.", prevN, prevRatio)
	case called:
		v.Kind = ConnBottleneck
		v.Text = head + ". Client-side connection bottleneck: " + advice(v, c)
	case v.ClientBusy >= ClientCPUBusy && !(s.IdealRPS > 0 && s.Efficiency >= ScalingEfficiency):
		v.Kind = ClientCPUBound
		v.Text = head + clientCPUText(v, c)
	case s.IdealRPS > 0 && s.Efficiency >= ScalingEfficiency:
		v.Kind = Scales
		v.Text = head + ". Throughput still grows with in-flight on one connection: no bottleneck at these counts."
	case v.Growing > 0:
		v.Kind = Inconclusive
		v.Text = head + fmt.Sprintf(". Not settled: %s was still growing at in-flight %d (%.2fx its throughput at in-flight %d), so the climb ended before the layouts flattened and this run cannot say the connection is not the limit; measure at higher in-flight counts.",
			v.Best, c.n, v.Growing, prevN)
	case s.IdealRPS > 0 && s.Efficiency < FlatEfficiency:
		flat(v, head, s, best)
	default:
		v.Kind = Inconclusive
		if v.Ratio >= 1 {
			v.Text = head + ". No clear bottleneck: more connections help a little; measure at higher in-flight."
		} else {
			v.Text = head + ". No clear bottleneck: more connections do not help, yet one connection scales only part of the way; measure at higher in-flight and watch the server's CPU."
		}
	}
	return noisy
}

// advice words a connection bottleneck's advice: the fewest connections
// near the best, and the pool that spreads RPCs over them in lang's stack.
func advice(v *Verdict, c comparison) string {
	enough, best := c.enough, c.best
	a := fmt.Sprintf("use %d connections (%s", v.Conns, v.Enough)
	if enough.Spec.ConnMode == AutoPoolMode {
		a = fmt.Sprintf("use the adaptive pool (%s, which sized itself to %d connections here, at least matching the best fixed layout", v.Enough, v.Conns)
	}
	if v.Enough != v.Best {
		of := fmt.Sprintf(" reached %.0f%% of %s", 100*enough.ThroughputRPS/best.Rec.ThroughputRPS, v.Best)
		if enough.Spec.ConnMode == AutoPoolMode {
			of = "; it" + of
		}
		a += of
	}
	if c.lang != "go" {
		return a + ", each channel with distinct arguments or its own subchannel pool; " + PoolLibrary(c.lang) + " spreads RPCs over them)."
	}
	return a + "; package pool spreads RPCs over them)."
}

// clientCPUText words a client-CPU-bound verdict: the busier layout's CPU
// and each side's CPU per RPC.
func clientCPUText(v *Verdict, c comparison) string {
	busy := c.busy
	cpus := clientCPUs(busy.Rec)
	t := fmt.Sprintf(". The client's own CPU is the limit: %s kept %.0f%% of its %d CPU%s busy at %.1f µs per RPC",
		v.BusyLayout, 100*v.ClientBusy, cpus, plural(cpus), busy.Rec.ClientCPUNSPerRPC/1e3)
	other := c.s
	if busy.Rec == c.s.Rec {
		other = c.best
	}
	if other.Rec.ClientCPUNSPerRPC > 0 {
		t += fmt.Sprintf(" (%s %.1f µs)", ConnLabel(other.Rec), other.Rec.ClientCPUNSPerRPC/1e3)
	}
	return t + ", so more connections cannot help until the client has CPU to spare: give it more cores, or cheaper RPCs, and sweep again."
}

// peakNote adds, to a verdict that is not a bottleneck, the lower count
// (of counts) where more connections still gave BottleneckRatio or more.
func peakNote(v *Verdict, counts []int, shared map[int]Row, multi map[int][]Row) {
	for _, m := range counts {
		if r := bestRatio(shared[m], multi[m]); r >= BottleneckRatio && r > v.PeakRatio {
			v.PeakInflight, v.PeakRatio = m, r
		}
	}
	if v.PeakInflight == 0 {
		return
	}
	capped := "something else capped every layout"
	if v.Kind == ClientCPUBound {
		capped = "the client's CPU ran out"
	}
	v.Text += fmt.Sprintf(" At in-flight %d, though, more connections gave %.2fx shared's throughput: there one connection was the limit, before %s.", v.PeakInflight, v.PeakRatio, capped)
}

// flat words a verdict where every layout flattens together, by the
// server's CPU when the records carry it: server-bound at ServerCPUBusy or
// above, not-the-server below, bound-elsewhere without it.
func flat(v *Verdict, head string, s, best Row) {
	const together = ". Every layout flattens together"
	sb, sok := ServerBusy(s.Rec)
	bb, bok := ServerBusy(best.Rec)
	if !sok && !bok {
		v.Kind = BoundElsewhere
		v.Text = head + together + ": the limit is not the client's connection but the server, the CPU or the network (the server's CPU was not recorded: it does not answer rpclab.v1.UsageService)."
		return
	}
	busy := s.Rec
	if bok && (!sok || bb > sb) {
		busy = best.Rec
	}
	sc := busy.ServerCPU
	v.ServerBusy, v.ServerLayout = sc.Busy, ConnLabel(busy)
	kept := fmt.Sprintf("the server kept %.0f%% of its %d CPU%s busy under %s (%.1f µs of server CPU per RPC",
		100*sc.Busy, sc.CPUs, plural(sc.CPUs), v.ServerLayout, sc.CPUNSPerRPC/1e3)
	if sc.Source == "os" {
		kept += "; read from the OS, not reported by the server"
	}
	kept += ")"
	if sc.Busy >= ServerCPUBusy {
		v.Kind = ServerBound
		v.Text = head + together + ", and " + kept + ": the server is the limit, not the client's connection; give the server more CPU (or a cheaper handler) and sweep again."
		return
	}
	v.Kind = NotServer
	v.Text = head + together + ", yet " + kept
	if v.ClientBusy > 0 {
		v.Text += fmt.Sprintf(", and the client %.0f%% of its", 100*v.ClientBusy)
	}
	v.Text += ": not the server's CPU and not the client's connection; the limit is between them or inside one of them without using CPU (the network's bandwidth or delay, a lock, a queue, a thread pool)."
}

// grewFrom is r's throughput over that of the same layout in rows (at a
// lower in-flight count) when it is at least Growth times it: the layout
// was still growing there; 0 otherwise.
func grewFrom(r *result.Record, rows []Row) float64 {
	for _, p := range rows {
		if ConnLabel(p.Rec) == ConnLabel(r) && p.Rec.ThroughputRPS > 0 {
			if g := r.ThroughputRPS / p.Rec.ThroughputRPS; Grew(1, g) {
				return g
			}
		}
	}
	return 0
}

// bestRatio is the best multi-connection throughput over shared's.
func bestRatio(shared Row, multi []Row) float64 {
	if shared.Rec == nil || shared.Rec.ThroughputRPS <= 0 {
		return 0
	}
	best := 0.0
	for _, r := range multi {
		best = max(best, r.Rec.ThroughputRPS)
	}
	return best / shared.Rec.ThroughputRPS
}

// Text joins the verdicts into one paragraph per group.
func Text(vs []Verdict) string {
	if len(vs) == 0 {
		return "No verdict: the run needs a shared layout measured at in-flight 1 and one more count, or a shared and a multi-connection layout at a common in-flight count."
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Text
	}
	return strings.Join(parts, "\n")
}
