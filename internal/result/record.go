// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package result defines every record rpclab writes, one JSON object per
// measured step, one per line (JSON Lines): the ping record (Record, kind
// "ping") that every rpclab client, in every language, writes; the bulk
// record (BulkRecord, kind "bulk") of rpclab bulk; and the flow record
// (FlowRecord, kind "flow") of rpclab flow. Keys are snake_case and carry
// their unit (_ns, _bps, _rps). docs/results.md, docs/bulk.md and
// docs/flow.md document each field, and schema/result.schema.json,
// schema/bulk.schema.json and schema/flow.schema.json are the schemas every
// writer is tested against. One Writer writes every kind and one reader
// (ReadAll) reads every kind, dispatching on "kind". Package report is the
// only reader that formats records for people.
package result

import (
	"time"

	"github.com/rpclab/rpclab/internal/stats"
)

// SchemaVersion is the version of the record layout written by this code.
// Readers reject records of a version they do not know.
const SchemaVersion = 1

// Record kinds: the "kind" key of every record.
const (
	KindPing = "ping" // Record
	KindBulk = "bulk" // BulkRecord
	KindFlow = "flow" // FlowRecord
)

// Kinds lists every record kind this code reads and writes.
var Kinds = []string{KindPing, KindBulk, KindFlow, KindLive}

// Kinded is a record of any kind: *Record, *BulkRecord or *FlowRecord.
// Writer writes any of them.
type Kinded interface {
	recordKind() string
}

func (*Record) recordKind() string     { return KindPing }
func (*BulkRecord) recordKind() string { return KindBulk }
func (*FlowRecord) recordKind() string { return KindFlow }

// Step statuses.
const (
	// StatusOK: the step ran its full interval and at least one RPC succeeded.
	StatusOK = "ok"
	// StatusFailed: the step could not run (target unreachable), no RPC
	// succeeded, more than 1% of its RPCs failed (the figures are kept), or
	// the run was stopped by a failure (a dead server). Error says why.
	StatusFailed = "failed"
	// StatusInterrupted: the run was stopped (Ctrl-C) during the measured
	// interval; the figures cover the part that ran.
	StatusInterrupted = "interrupted"
	// StatusOverloaded: an open-loop step whose client could not make the
	// sends its schedule asked for: more than 1% of them were not made by
	// the interval's end (unsent). The figures are what was made and
	// completed; the step is not a clean measurement of the offered rate.
	StatusOverloaded = "overloaded"
	// StatusStalled: RPCs sat in flight with no reply past the verdict's
	// threshold (verdict.StallAgeOf) when the step's interval ended
	// (oldest_in_flight_ns): the server (or the path to it) stalled, and
	// the step's figures, which count only the RPCs that ended, are not a
	// measurement of it. Set by verdict.MarkStall, in closed and open loops
	// alike; it replaces ok, failed or overloaded (a stalled server also
	// leaves sends unmade and RPCs cut off), never interrupted.
	StatusStalled = "stalled"
)

// Record is one measured step of a run.
type Record struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // "ping" for the ping sweeps
	Status        string `json:"status"`
	Error         string `json:"error,omitempty"`
	// StartedAt is when the measured interval began (RFC 3339, UTC).
	StartedAt time.Time `json:"started_at"`

	Spec Spec `json:"spec"`
	Env  Env  `json:"env"`

	// Requests counts every RPC that ended in the interval, errors included.
	Requests int64 `json:"requests"`
	// Errors counts failed RPCs by status code name ("Unavailable", ...).
	Errors map[string]int64 `json:"errors"`
	// ErrorSample is one failed RPC's status code and message
	// ("Unimplemented: unknown method Foo"), of the most common failing
	// code: the first such error a worker saw. Absent when none failed.
	ErrorSample string `json:"error_sample,omitempty"`
	// DurationNS is the measured interval as it really ran.
	DurationNS int64 `json:"duration_ns"`
	// ThroughputRPS is successful RPCs per second of DurationNS.
	ThroughputRPS float64 `json:"throughput_rps"`
	// Latency of successful RPCs, from the client's send to its receipt.
	Latency stats.Latency `json:"latency"`
	// LatencyClamped counts successful RPCs slower than the histogram's
	// highest trackable value (stats.HighestTrackable, 100 s), which enter
	// Latency and HistogramHDR as that value; absent when none.
	LatencyClamped int64 `json:"latency_clamped,omitempty"`
	// HistogramHDR is the latency histogram (nanoseconds) in HdrHistogram's
	// compressed V2 base64 form, so records of any language merge exactly.
	HistogramHDR string `json:"histogram_hdr"`
	// ConnsObserved is the number of established TCP connections from the
	// client process to the target, read from the operating system during
	// the interval (-1 when it could not be read).
	ConnsObserved int `json:"conns_observed"`
	// ClientCPUNS is the client process's user+system CPU time during the
	// interval; ClientCPUNSPerRPC divides it by Requests.
	ClientCPUNS       int64   `json:"client_cpu_ns"`
	ClientCPUNSPerRPC float64 `json:"client_cpu_ns_per_rpc"`
	// ServerCPU is the server process's own CPU over the interval, read
	// through rpclab.v1.UsageService at its start and end (closed loop);
	// absent when the server does not answer that service (a foreign
	// server: a YDB node, another tool's server) or a read failed.
	ServerCPU *ServerCPU `json:"server_cpu,omitempty"`
	// HostCPU is the host's CPU over the interval as the kernel counts it
	// (/proc/stat), on the client's CPUs, the server's and the whole host,
	// so that CPU taken by other work shows beside the client's and the
	// server's own; absent when it could not be read (not Linux, an
	// imported record; a sweep on workers has each worker's in Workers).
	HostCPU *HostCPU `json:"host_cpu,omitempty"`
	// PoolSizes is the size an adaptive pool (spec.conn_mode "pool-auto")
	// chose over the interval: its size at the interval's start (t_ns 0),
	// then each resize, in order, at most MaxPoolSizes of them (the
	// earliest kept); absent for every other layout. conns_observed stays
	// what the kernel saw.
	PoolSizes []PoolSize `json:"pool_sizes,omitempty"`

	// Open loop only (spec.load_model "open"); absent from closed-loop
	// records. Latency above then counts from each RPC's intended send
	// time, so a client or connection that falls behind shows in it.
	//
	// Sent counts the sends intended inside the interval that were made.
	Sent *int64 `json:"sent,omitempty"`
	// Unsent counts the sends due inside the interval that the client did
	// not make by its end (sent + unsent is what the schedule asked for).
	Unsent *int64 `json:"unsent,omitempty"`
	// ScheduleLag is how late sends left compared with the schedule
	// (handed to a caller minus intended), with its HDR histogram: a
	// growing lag means the client itself is behind, not the server.
	ScheduleLag    *stats.Latency `json:"schedule_lag,omitempty"`
	ScheduleLagHDR string         `json:"schedule_lag_hdr,omitempty"`
	// MaxOutstandingHits counts sends that found spec.max_outstanding RPCs
	// already in flight and had to wait for one to end.
	MaxOutstandingHits *int64 `json:"max_outstanding_hits,omitempty"`
	// Messages counts the replies of a server-streaming --call (each call
	// is one of Requests, timed to its last reply); absent otherwise.
	Messages *int64 `json:"messages,omitempty"`
	// PeakOutstanding is the most RPCs the schedule needed in flight at once.
	PeakOutstanding *int64 `json:"peak_outstanding,omitempty"`

	// InFlightAtEnd counts the RPCs still in flight when the interval
	// ended (closed loop: callers whose RPC had not returned; open loop:
	// sends not yet answered, before the drain), and OldestInFlightNS is
	// how long the oldest of them had been waiting then, from its send: a
	// lower bound of its latency, which the latency figures above (RPCs
	// that ended) do not hold. Absent from records that did not measure
	// them (imported records, other languages' clients, workers).
	InFlightAtEnd    *int64 `json:"in_flight_at_end,omitempty"`
	OldestInFlightNS int64  `json:"oldest_in_flight_ns,omitempty"`

	// Source says where an imported record came from (rpclab import: a
	// post, another tool's output file); absent from records rpclab
	// measured. An imported record has only what its source gave: no
	// histogram (histogram_hdr empty) unless the source had one,
	// conns_observed -1, no client CPU.
	Source string `json:"source,omitempty"`

	// Steps run on several client hosts (rpclab sweep --workers) only;
	// absent otherwise. The figures above are then the workers' merged:
	// requests and errors summed, latency and histogram_hdr the exact
	// merge of their histograms, client_cpu_ns summed, conns_observed
	// summed (-1 when a worker could not count), duration_ns the longest
	// worker's.
	//
	// Workers is each worker's share of the step.
	Workers []WorkerShare `json:"workers,omitempty"`
	// WorkersStartNS is the time from the step's start until every
	// worker's client was running (its connections ready).
	WorkersStartNS int64 `json:"workers_start_ns,omitempty"`
	// Partial: a worker was lost during the step; the figures are the
	// surviving workers' (status failed, error names the lost worker).
	Partial bool `json:"partial,omitempty"`
}

// MaxPoolSizes bounds Record.PoolSizes.
const MaxPoolSizes = 256

// PoolSize is one size an adaptive pool had from TNS on.
type PoolSize struct {
	// TNS is the time since the interval's start.
	TNS int64 `json:"t_ns"`
	// Size is the number of connections taking RPCs.
	Size int `json:"size"`
	// Reason is why the pool took this size (pool.Event.Reason; "start"
	// for the size it entered the interval with).
	Reason string `json:"reason"`
}

// WorkerShare is one worker's part of a step run on several hosts.
type WorkerShare struct {
	// Addr is the worker's host:port as the driver was given it.
	Addr string `json:"addr"`
	// Impl is "rpclab" (an rpclab worker: exact HDR histogram, connections
	// counted) or "official" (a gRPC project worker: its bucket histogram
	// converted, see histogram_rel_error).
	Impl string `json:"impl"`
	// Status is "ok", "idle" (no in-flight share: the step's in-flight
	// count is below the number of workers) or "lost" (it failed during
	// the step; error says how).
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Cores is the worker's answer to CoreCount.
	Cores int `json:"cores"`
	// Inflight is this worker's share of spec.inflight: an even split,
	// the first workers taking one more each for the remainder.
	Inflight int `json:"inflight"`
	// RateRPS is this worker's share of an open-loop step's spec.rate_rps:
	// the rate split evenly over the workers with an in-flight share
	// (absent in a closed-loop step and on an idle worker).
	RateRPS       float64          `json:"rate_rps,omitempty"`
	Requests      int64            `json:"requests"`
	Errors        map[string]int64 `json:"errors,omitempty"`
	DurationNS    int64            `json:"duration_ns"`
	ThroughputRPS float64          `json:"throughput_rps"`
	Latency       stats.Latency    `json:"latency"`
	HistogramHDR  string           `json:"histogram_hdr,omitempty"`
	// CPUNS is the worker process's user+system CPU time in the interval;
	// CPUBusy divides it by duration_ns x cores.
	CPUNS   int64   `json:"cpu_ns"`
	CPUBusy float64 `json:"cpu_busy"`
	// GeneratorLimited: cpu_busy above 0.8, the worker's CPUs rather than
	// the server may be what limits the step.
	GeneratorLimited bool `json:"generator_limited,omitempty"`
	// ConnsObserved is the TCP connections the worker's kernel held to the
	// target at the end of the interval (-1: not counted, an official
	// worker).
	ConnsObserved int `json:"conns_observed"`
	// HostCPU is the worker host's CPU over the interval on the CPUs the
	// worker may run on, as its kernel counted it (/proc/stat): what
	// other work took there is busy_ns less cpu_ns, plus steal_ns. Absent
	// from an official worker's share and where it could not be read.
	HostCPU *CPUTimes `json:"host_cpu,omitempty"`
	// HistogramRelError bounds the relative error of each latency value
	// taken from an official worker's buckets (each bucket's count is
	// placed at its midpoint): half the driver's bucket resolution; 0 for
	// rpclab workers, whose histogram is exact.
	HistogramRelError float64 `json:"histogram_rel_error,omitempty"`
}

// Spec is what was asked for: the parameters of the step.
type Spec struct {
	Target string `json:"target"`
	// Service is the ping service the step drove: "ydb-debug" (YDB's
	// Ydb.Debug.V1.DebugService, PingPlainGrpc and PingStream); absent for
	// "benchmark" (grpc.testing.BenchmarkService), the default.
	Service string `json:"service,omitempty"`
	// RPC is "unary" or "streaming" (bidi ping-pong on one stream per worker).
	RPC string `json:"rpc"`
	// ConnMode names the connection layout: "shared", "per-worker", "pool",
	// "pool-auto" (a pool that sizes itself between conns_min and
	// conns_requested), or a stack-specific one ("channel-per-worker", "local-pool",
	// "distinct-args").
	ConnMode string `json:"conn_mode"`
	// ConnsRequested is how many connections the layout asks for (for
	// "pool-auto", the most it may open).
	ConnsRequested int `json:"conns_requested"`
	// ConnsMin is the fewest connections a "pool-auto" layout keeps; absent
	// for every other layout.
	ConnsMin int `json:"conns_min,omitempty"`
	// Pick is the pool's pick policy ("round-robin", "least-loaded"); empty
	// for layouts without a pool.
	Pick string `json:"pick,omitempty"`
	// Inflight is the number of RPCs kept in flight (closed loop: workers).
	Inflight     int   `json:"inflight"`
	PayloadBytes int   `json:"payload_bytes"`
	WarmupNS     int64 `json:"warmup_ns"`
	IntervalNS   int64 `json:"interval_ns"`
	// LoadModel is "closed" (each worker waits for its reply before sending
	// again) or "open" (sends follow a schedule).
	LoadModel string `json:"load_model"`
	// Server names the server implementation when rpclab started it
	// ("go", "cpp"); empty for an external target.
	Server string `json:"server,omitempty"`
	// Netem is the emulated network rpclab put between client and server
	// (rpclab sweep --delay/--jitter/--rate); absent without one. Target
	// is then the proxy's address and Netem.Upstream the server's.
	Netem *NetemSpec `json:"netem,omitempty"`
	// RateRPS is the offered load of an open-loop step (RPCs per second),
	// Arrival its process ("constant", "poisson"), Pacing how its scheduler
	// waited for each send ("timer", "precise") and MaxOutstanding its
	// bound on RPCs in flight; absent in closed-loop records.
	RateRPS        float64 `json:"rate_rps,omitempty"`
	Arrival        string  `json:"arrival,omitempty"`
	Pacing         string  `json:"pacing,omitempty"`
	MaxOutstanding int     `json:"max_outstanding,omitempty"`
	// Call is the method called instead of the ping ("pkg.Service/Method",
	// rpclab sweep --call); absent for the ping.
	Call string `json:"call,omitempty"`
}

// ServerCPU is a server's own CPU use over a step's interval, as the
// server reported it (rpclab.v1.UsageService).
type ServerCPU struct {
	// CPUNS is the server process's user+system CPU time between the two
	// reads; CPUNSPerRPC divides it by the record's requests.
	CPUNS       int64   `json:"cpu_ns"`
	CPUNSPerRPC float64 `json:"cpu_ns_per_rpc"`
	// CPUs is how many CPUs the server process may run on.
	CPUs int `json:"cpus"`
	// Busy is the share of those CPUs the server kept busy: CPUNS over the
	// record's duration_ns times CPUs.
	Busy float64 `json:"busy"`
	// Source is "os" when rpclab read the server process's CPU from the
	// operating system (a server on the client's host that holds the
	// target's listening socket), over the whole step scaled to its
	// interval; absent when the server reported it itself.
	Source string `json:"source,omitempty"`
}

// HostCPU is the time of the CPUs a step ran on, as the kernel counted
// it over the step's interval (/proc/stat on the client's host, read
// beside the client's own CPU time).
type HostCPU struct {
	// Client is the CPUs the client was pinned to (env.client_cpus), or
	// every CPU of the host when it was not pinned.
	Client CPUTimes `json:"client"`
	// Server is the CPUs rpclab pinned the server it started to (a child
	// server on the same host); absent otherwise.
	Server *CPUTimes `json:"server,omitempty"`
	// Host is every CPU of the host.
	Host CPUTimes `json:"host"`
}

// CPUTimes is a set of CPUs' time over an interval, in nanoseconds summed
// over the set: BusyNS+IdleNS+StealNS is the interval times the number of
// CPUs (to the kernel's tick, 10 ms per CPU).
type CPUTimes struct {
	// CPUs lists the CPUs, ascending.
	CPUs []int `json:"cpus"`
	// BusyNS is user+nice+system+irq+softirq time: anything that ran,
	// this step's client and server included.
	BusyNS int64 `json:"busy_ns"`
	// IdleNS is idle+iowait time.
	IdleNS int64 `json:"idle_ns"`
	// StealNS is time a hypervisor gave these CPUs to another guest.
	StealNS int64 `json:"steal_ns"`
}

// NetemSpec is the emulated network of a step: one link per direction.
type NetemSpec struct {
	// Up carries what the client sends, Down the server's replies.
	Up   NetemLink `json:"up"`
	Down NetemLink `json:"down"`
	// Upstream is the server's host:port behind the proxy.
	Upstream string `json:"upstream"`
}

// NetemLink is one direction: one-way delay, jitter (± per chunk) and
// bandwidth in bits per second (0: unlimited).
type NetemLink struct {
	DelayNS  int64 `json:"delay_ns"`
	JitterNS int64 `json:"jitter_ns"`
	RateBps  int64 `json:"rate_bps"`
}

// Env describes the client that measured.
type Env struct {
	Language       string `json:"language"`
	GRPCImpl       string `json:"grpc_impl"`
	GRPCVersion    string `json:"grpc_version"`
	RuntimeVersion string `json:"runtime_version"`
	HostCPUs       int    `json:"host_cpus"`
	// ClientCPUs lists the CPUs the client was pinned to; empty if unpinned.
	ClientCPUs []int  `json:"client_cpus,omitempty"`
	Hostname   string `json:"hostname"`
	OS         string `json:"os"`
}
