// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"fmt"
	"time"
)

// KindLive is the kind of a LiveRecord: rpclab doctor --pid's window over
// a running process.
const KindLive = "live"

// Live record statuses (beside StatusOK and StatusInterrupted).
const (
	// LiveEnded: the process exited during the window; the record holds
	// what was sampled before it did.
	LiveEnded = "ended"
)

// Stacks a LiveProcess names, from what the process maps and carries.
const (
	StackGo      = "grpc-go"   // a Go binary with google.golang.org/grpc in its build info
	StackJava    = "grpc-java" // a JVM
	StackCCore   = "c-core"    // libgrpc in the mappings, or grpc's core symbols in the binary
	StackNode    = "grpc-js"   // a node binary
	StackTonic   = "tonic"     // a Rust binary naming tonic or h2
	StackUnknown = "unknown"
)

// MaxLiveSamples bounds a record's time line: a longer watch keeps the
// last MaxLiveSamples samples (the window's totals still cover it all).
const MaxLiveSamples = 3600

// MaxLiveSampleEntries bounds the connections and the sockets one sample
// names: the busiest of its interval.
const MaxLiveSampleEntries = 64

// LiveRecord is one window of rpclab doctor --pid over a running process:
// what the kernel (sock_diag's TCP_INFO, /proc) and, when asked, channelz
// showed of it. Totals cover the whole window; Samples are its time line,
// one per sampling interval. docs/live.md documents each field.
type LiveRecord struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // "live"
	// Status is ok, ended (the process exited mid-window) or interrupted.
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
	// StartedAt is the first sample's time (RFC 3339, UTC); DurationNS the
	// time from the first sample to the last.
	StartedAt  time.Time `json:"started_at"`
	DurationNS int64     `json:"duration_ns"`
	// IntervalNS is the least time between samples; the sampler stretches
	// it when a sample costs more than 1% of a CPU's interval.
	IntervalNS int64 `json:"interval_ns"`
	// SamplerCPUNS is the CPU rpclab spent sampling over the window.
	SamplerCPUNS int64 `json:"sampler_cpu_ns,omitempty"`

	Process LiveProcess `json:"process"`
	CPU     LiveCPU     `json:"cpu"`
	// Conns are the process's established TCP connections seen in the
	// window, by inode; Listening its listening TCP addresses.
	Conns     []LiveConn `json:"conns"`
	Listening []string   `json:"listening,omitempty"`
	// Samples is the time line, oldest first, at most MaxLiveSamples.
	Samples  []LiveSample  `json:"samples"`
	Channelz *LiveChannelz `json:"channelz,omitempty"`
}

func (*LiveRecord) recordKind() string { return KindLive }

// LiveProcess is the process sampled and its gRPC stack.
type LiveProcess struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	Exe  string `json:"exe,omitempty"`
	// Stack is one of the Stack* names; StackDetail what it rests on
	// ("google.golang.org/grpc v1.85.0", "libgrpc.so.51").
	Stack       string `json:"stack"`
	StackDetail string `json:"stack_detail,omitempty"`
	// Language picks the fix's code (report.PoolChange): go, java, cpp,
	// python, ruby, node, rust or unknown.
	Language string `json:"language"`
}

// LiveCPU is the process's CPU over the window against what it may use,
// and the host's.
type LiveCPU struct {
	// AllowedCPUs is what the process may use: its affinity's CPUs, or its
	// cgroup's quota when lower.
	AllowedCPUs  float64 `json:"allowed_cpus"`
	AffinityCPUs int     `json:"affinity_cpus"`
	QuotaCPUs    float64 `json:"quota_cpus,omitempty"`
	HostCPUs     int     `json:"host_cpus"`
	// ProcessNS is the process's user+system CPU over the window;
	// HostBusyNS the busy time of every CPU of the host (steal included).
	ProcessNS  int64 `json:"process_ns"`
	HostBusyNS int64 `json:"host_busy_ns"`
	// WaitNS is the time its threads were runnable and waited for a CPU
	// (schedstat), summed over them: CPU it wanted and did not get.
	WaitNS int64 `json:"wait_ns"`
	// ThreadCount is the process's threads at the end; Threads the
	// busiest, at most MaxLiveThreads, busiest first.
	ThreadCount int          `json:"thread_count"`
	Threads     []LiveThread `json:"threads"`
}

// MaxLiveThreads bounds the threads a record names.
const MaxLiveThreads = 16

// LiveThread is one thread's CPU over the window.
type LiveThread struct {
	TID   int    `json:"tid"`
	Name  string `json:"name"`
	CPUNS int64  `json:"cpu_ns"`
}

// LiveConn is one TCP connection over the part of the window it was seen:
// counters are differences between its first and last sample.
type LiveConn struct {
	Inode  uint32 `json:"inode"`
	Local  string `json:"local"`
	Remote string `json:"remote"`
	// FirstNS and LastNS are when it was first and last seen, from the
	// window's start; Samples how many samples saw it, AppLimited how many
	// of those had the delivery rate marked app-limited.
	FirstNS    int64 `json:"first_ns"`
	LastNS     int64 `json:"last_ns"`
	Samples    int   `json:"samples"`
	AppLimited int   `json:"app_limited"`

	BytesAcked    uint64 `json:"bytes_acked"`
	BytesReceived uint64 `json:"bytes_received"`
	BytesSent     uint64 `json:"bytes_sent"`
	BytesRetrans  uint64 `json:"bytes_retrans"`
	// BusyUS, RwndLimitedUS and SndbufLimitedUS are tcpi_busy_time,
	// tcpi_rwnd_limited and tcpi_sndbuf_limited over the window.
	BusyUS          uint64 `json:"busy_us"`
	RwndLimitedUS   uint64 `json:"rwnd_limited_us"`
	SndbufLimitedUS uint64 `json:"sndbuf_limited_us"`
	// The last sample's delivery rate, RTT, cwnd and unacked segments; the
	// most unsent bytes any sample saw.
	DeliveryRateBps uint64 `json:"delivery_rate_bps"`
	RTTUS           uint32 `json:"rtt_us"`
	MinRTTUS        uint32 `json:"min_rtt_us"`
	SndCwnd         uint32 `json:"snd_cwnd"`
	Unacked         uint32 `json:"unacked"`
	NotsentMaxBytes uint32 `json:"notsent_max_bytes"`
}

// LiveSample is one sampling interval: what changed since the previous
// sample.
type LiveSample struct {
	AtNS       int64 `json:"at_ns"`
	CPUNS      int64 `json:"cpu_ns"`
	HostBusyNS int64 `json:"host_busy_ns"`
	// Conns holds each connection that moved bytes or was limited, by its
	// index in LiveRecord.Conns.
	Conns []LiveConnSample `json:"conns,omitempty"`
	// Threads are the busiest threads of the interval, at most 4.
	Threads []LiveThread `json:"threads,omitempty"`
	// Streams are channelz's streams in flight per socket at the sample.
	Streams []LiveStreams `json:"streams,omitempty"`
}

// LiveConnSample is one connection's interval.
type LiveConnSample struct {
	Conn          int    `json:"conn"`
	BytesAcked    uint64 `json:"bytes_acked"`
	BytesReceived uint64 `json:"bytes_received"`
	BusyUS        uint64 `json:"busy_us"`
	LimitedUS     uint64 `json:"limited_us"`
}

// LiveStreams is one channelz socket's streams in flight at a sample.
type LiveStreams struct {
	Socket   int64 `json:"socket"`
	InFlight int64 `json:"in_flight"`
}

// LiveChannelz is what the process's channelz service showed over the
// window: its channels, subchannels and sockets (client side).
type LiveChannelz struct {
	Addr string `json:"addr"`
	// Found is set when Addr is one of the process's listening ports that
	// answered channelz, not an address the user gave.
	Found       bool                 `json:"found,omitempty"`
	Channels    []LiveChannel        `json:"channels"`
	Subchannels []LiveSubchannel     `json:"subchannels"`
	Sockets     []LiveChannelzSocket `json:"sockets"`
	// Error is the last read's failure, when a read failed mid-window.
	Error string `json:"error,omitempty"`
}

// LiveChannel is one top channel; calls are over the window.
type LiveChannel struct {
	ID             int64   `json:"id"`
	Target         string  `json:"target"`
	CallsStarted   int64   `json:"calls_started"`
	CallsSucceeded int64   `json:"calls_succeeded"`
	CallsFailed    int64   `json:"calls_failed"`
	Subchannels    []int64 `json:"subchannels"`
	// Samples counts the reads that listed it; InFlightMax and InFlightSum
	// its calls in flight (started - succeeded - failed: those on a stream
	// and those waiting for one) over them.
	Samples     int   `json:"samples"`
	InFlightMax int64 `json:"in_flight_max"`
	InFlightSum int64 `json:"in_flight_sum"`
}

// LiveSubchannel is one subchannel and its sockets.
type LiveSubchannel struct {
	ID      int64   `json:"id"`
	Target  string  `json:"target"`
	Sockets []int64 `json:"sockets"`
}

// LiveChannelzSocket is one client socket: streams over the window, and
// the streams in flight (started - succeeded - failed) over its samples.
type LiveChannelzSocket struct {
	ID     int64  `json:"id"`
	Local  string `json:"local"`
	Remote string `json:"remote"`

	StreamsStarted   int64 `json:"streams_started"`
	StreamsSucceeded int64 `json:"streams_succeeded"`
	StreamsFailed    int64 `json:"streams_failed"`
	// Samples counts the samples that read it; InFlightMax and
	// InFlightSum the streams in flight over them; AtLimit how many had
	// InFlight at PeerMaxStreams (0 when the stack does not report it).
	Samples        int   `json:"samples"`
	InFlightMax    int64 `json:"in_flight_max"`
	InFlightSum    int64 `json:"in_flight_sum"`
	AtLimit        int   `json:"at_limit"`
	PeerMaxStreams int64 `json:"peer_max_streams,omitempty"`
}

// checkLive checks what the schema cannot: samples within the window and
// connections named by samples that exist.
func checkLive(r *LiveRecord) error {
	if len(r.Samples) > MaxLiveSamples {
		return fmt.Errorf("%d samples, above %d", len(r.Samples), MaxLiveSamples)
	}
	for i, s := range r.Samples {
		if len(s.Conns) > MaxLiveSampleEntries || len(s.Streams) > MaxLiveSampleEntries {
			return fmt.Errorf("samples[%d] names %d connections and %d sockets, above %d", i, len(s.Conns), len(s.Streams), MaxLiveSampleEntries)
		}
		for _, c := range s.Conns {
			if c.Conn >= len(r.Conns) {
				return fmt.Errorf("samples[%d] names conn %d of %d", i, c.Conn, len(r.Conns))
			}
		}
	}
	for i, c := range r.Conns {
		if c.AppLimited > c.Samples {
			return fmt.Errorf("conns[%d].app_limited %d above its %d samples", i, c.AppLimited, c.Samples)
		}
	}
	return nil
}
