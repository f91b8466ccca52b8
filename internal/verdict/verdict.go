// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package verdict is the one place that judges result records: whether the
// client's connection layout is the bottleneck (Verdicts, the one judge
// that rpclab sweep, doctor, report and compare all print), which layout
// to advise (Advise), and whether an open-loop step met a latency
// objective (SLO). It reads records only; it measures nothing and formats
// no tables (package report does).
package verdict

import "time"

// Thresholds of every judgement in this package: one set, shared by
// rpclab sweep/report and rpclab doctor. The bottleneck verdict compares
// layouts at the same in-flight count (the highest one that every compared
// layout reached), measured side by side in one run, so they hold on noisy
// machines. In order:
//
//  1. connection-bottleneck: the best multi-connection layout gets at least
//     BottleneckRatio times shared's throughput — at the highest common
//     in-flight count and, when the run has one, at the next lower one too,
//     so one noisy pair of steps cannot make the call — or shared's
//     efficiency is below FlatEfficiency while the best layout's is at
//     least ScalingEfficiency. The advice is Advise's.
//  2. client-cpu-bound: not a connection bottleneck and not scaling, and
//     shared or the best layout kept at least ClientCPUBusy of the client's
//     CPUs busy: the client's own CPU is the limit, so more connections
//     cannot help until it has CPU to spare.
//  3. every layout flattens together: shared's efficiency is below
//     FlatEfficiency and more connections do not help. When the records
//     carry the server's CPU (server_cpu, from rpclab.v1.UsageService):
//     server-bound if shared or the best layout kept at least
//     ServerCPUBusy of the server's CPUs busy, else not-the-server; without
//     it, bound-elsewhere (the server, the CPU or the network), saying the
//     server's CPU was not recorded.
//  4. scales: shared's efficiency is at least ScalingEfficiency.
//  0. trap: a layout asked for more connections than the OS saw; the
//     text names the cause and the fix, then judges the layouts that got
//     their connections. Every rule counts a layout's connections as the
//     OS saw them (conns_observed), as requested only when the count could
//     not be read, and then says so.
//  5. inconclusive: not settled when, short of a bottleneck, the best
//     layout still grew by Growth or more from the next lower compared
//     in-flight count and pulled further ahead of shared there (the climb
//     ended before the layouts flattened: no verdict clears the
//     connection, and none says every layout flattens together); anything
//     else (or no in-flight-1 step to draw the ideal line from, or fewer than MinInflights common in-flight counts where
//     a bottleneck would otherwise be called).
//  7. busy-host, said first, before any of the above: on some of the
//     group's steps other work (busy CPU time the kernel counted on the
//     CPUs the step ran on, less the client's and the server's own, plus
//     steal) took more than OtherWorkShare of those CPUs. The text names
//     the CPUs and the in-flight counts; rules that rest on idle CPU
//     (client-cpu-bound, not-the-server, bound-elsewhere) do not fire
//     there, and the others' reading follows as what the rules read from
//     figures that are not the client's or the server's.
//  6. shared-only: the group has the shared layout and nothing else (YDB's
//     published single-connection table): its gain and efficiency at
//     SharedOnlyInflight times in-flight 1, read against FlatEfficiency
//     and ScalingEfficiency, and the advice to add connections and measure
//     again, since one layout cannot tell a connection bottleneck from a
//     limit elsewhere.
//
// Each step is judged on its own first (MarkStall): one that left an RPC
// in flight for StallAge or more when its interval ended is stalled, and
// enters no verdict.
const (
	// BottleneckRatio: when the best multi-connection layout gets at least
	// this multiple of the shared connection's throughput, the shared
	// connection is the bottleneck. rpclab's run-to-run noise on a shared
	// 2-core machine is 20-40% for single steps, hence the confirmation at
	// a second in-flight count.
	BottleneckRatio = 1.3
	// EnoughOfBest: a layout reaching at least this fraction of the best
	// throughput is good enough; Advise picks among those.
	EnoughOfBest = 0.9
	// FlatEfficiency: below this efficiency (throughput over the ideal
	// line), a layout has stopped scaling with in-flight.
	FlatEfficiency = 0.5
	// ScalingEfficiency: at or above it, a layout still scales.
	ScalingEfficiency = 0.8
	// ClientCPUBusy: at or above this share of the CPUs the client was
	// pinned to (all the host's when unpinned), busy with user+system time
	// over the interval, the client has no CPU to spare.
	ClientCPUBusy = 0.9
	// ServerCPUBusy: at or above this share of the CPUs the server process
	// may run on, busy over the interval (server_cpu.busy), the server has
	// no CPU to spare; the same line as the client's, so the two sides of
	// a run are read alike.
	ServerCPUBusy = ClientCPUBusy
	// Growth: a layout whose throughput at twice the in-flight count is
	// below Growth times the previous one has stopped growing (see Grew;
	// rpclab doctor ends a layout's climb after doctor.FlatSteps such
	// steps in a row).
	Growth = 1.10
	// MinInflights: a bottleneck is called only from layouts measured at
	// this many in-flight counts at least. At in-flight 1 a pool can use
	// only one of its connections, so a gain measured there is noise; and
	// one count gives nothing to confirm a ratio with.
	MinInflights = 2
	// SharedOnlyInflight: a run of the shared layout alone is judged at
	// this in-flight count, ten times in-flight 1, as YDB's post reads its
	// single-connection table (10x the in-flight RPCs, 3.56x the
	// throughput); at the highest count measured when the run stops below
	// it.
	SharedOnlyInflight = 10
	// Fall: a shared-only run whose throughput at its highest in-flight
	// count is more than this share below its peak lost throughput past
	// the peak, and its verdict says so. YDB's published table falls 7.9%
	// from in-flight 17 to 21 (44044 to 40585 req/s); 5% is above the
	// step-to-step noise of that table's top (18 is 0.04% below 17).
	Fall = 0.05
	// OtherWorkShare: above this share of the CPUs a step ran on, taken by
	// other work (record.host_cpu's busy time less the client's and the
	// server's CPU, plus steal), the step's figures are not the client's
	// or the server's (busy-host). The kernel counts CPU time in 10 ms
	// ticks (a 300 ms step on one CPU: 3% a tick), and softirq work of
	// loopback networking may be charged to the CPU rather than to either
	// process; 25% leaves room for both. A CPU hog pinned to the client's
	// CPU read 72% (lab's TestBusyHostVerdict, on this 2-core machine
	// while others used it too); a quiet machine's reading is not yet
	// measured here.
	OtherWorkShare = 0.25
)

// StallAge: a step whose oldest RPC still in flight when its interval
// ended (record.oldest_in_flight_ns) had waited this long or longer with
// no reply is stalled (MarkStall): the server, or the path to it, held
// it. A healthy step's oldest RPC in flight is about one latency old
// (the loopback step: P100 3.8 ms; rpclab's open loop gives up
// on a reply after its 2 s drain); 1 s is far above what a loopback or a
// netem delay of a few hundred ms gives, and a server frozen for a second
// of a step has not been measured by it.
const StallAge = time.Second

// StallRTTs is how many of a step's emulated round trips (netem: each
// direction's delay plus its jitter) StallAgeOf adds to StallAge: a ping
// is one round trip, and a connection's flow-control window grows over a
// few of them, so an RPC on a netem path of 1 s RTT is about 1 s old at
// the step's end with nothing stalled; four more round trips than that are
// not a slow path but a held RPC.
const StallRTTs = 4

// Kind names a verdict.
type Kind string

// Verdict kinds.
const (
	// ConnBottleneck: more connections give clearly more throughput.
	ConnBottleneck Kind = "connection-bottleneck"
	// BoundElsewhere: every layout flattens together; the limit is the
	// server, the CPU or the network, not the client's connections (the
	// records do not say how busy the server was).
	BoundElsewhere Kind = "bound-elsewhere"
	// ServerBound: every layout flattens together and the server kept at
	// least ServerCPUBusy of its CPUs busy: the server is the limit.
	ServerBound Kind = "server-bound"
	// NotServer: every layout flattens together, yet the server kept less
	// than ServerCPUBusy of its CPUs busy (YDB's "the server was idle"):
	// neither the client's connection nor the server's CPU is the limit.
	NotServer Kind = "not-the-server"
	// ClientCPUBound: the client's own CPU is full; more connections cannot
	// help it.
	ClientCPUBound Kind = "client-cpu-bound"
	// Scales: throughput still grows with in-flight on one connection.
	Scales Kind = "scales"
	// Trap: a layout asked for more connections than the operating system
	// saw (identical channel arguments sharing one subchannel in C-core
	// stacks and grpc-js): it did not measure what it is named after.
	Trap Kind = "trap"
	// SharedOnly: only the shared layout was measured; the verdict says
	// how far one connection scaled and to add connections and measure
	// again.
	SharedOnly Kind = "shared-only"
	// BusyHost: other work took more than OtherWorkShare of the CPUs some
	// of the judged steps ran on: their figures are not the client's or
	// the server's (Verdict.Rule keeps what the rules said).
	BusyHost Kind = "busy-host"
	// Inconclusive: between the thresholds, or not enough data.
	Inconclusive Kind = "inconclusive"
)

// Grew reports whether throughput cur, measured at twice the in-flight
// count of prev, still grew: cur is at least Growth times prev.
func Grew(prev, cur float64) bool { return cur >= Growth*prev }
