// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import "time"

// BulkRecord is one measured bulk step (rpclab bulk): one transport, size, chunk and stream
// count. It is written as one JSON line, like Record, with the same
// schema_version, status values and env; schema/bulk.schema.json is its
// schema and docs/bulk.md documents every field.
type BulkRecord struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"` // always "bulk"
	Status        string    `json:"status"`
	Error         string    `json:"error,omitempty"`
	StartedAt     time.Time `json:"started_at"`

	Spec BulkSpec `json:"spec"`
	Env  Env      `json:"env"`

	// Requests counts downloads that completed with the right length and
	// checksum in the measured interval.
	Requests int64 `json:"requests"`
	// Bytes counts every byte received in the interval, including those of
	// a download that failed part way.
	Bytes int64 `json:"bytes"`
	// Checksum names the integrity check of every download.
	Checksum   string `json:"checksum"`
	DurationNS int64  `json:"duration_ns"`
	// ThroughputBytesPerS is Bytes per second of DurationNS.
	ThroughputBytesPerS float64 `json:"throughput_bytes_per_s"`

	// CPU time (user+system) of each process during the interval, and per
	// GiB received. Server figures are -1 when the server could not be
	// asked (it died).
	ClientCPUNS      int64   `json:"client_cpu_ns"`
	ServerCPUNS      int64   `json:"server_cpu_ns"`
	ClientCPUSPerGiB float64 `json:"client_cpu_s_per_gib"`
	ServerCPUSPerGiB float64 `json:"server_cpu_s_per_gib"`

	// Go heap allocations during the interval (runtime/metrics), in bytes
	// per MiB received and in objects per completed request.
	ServerAllocBytes       int64   `json:"server_alloc_bytes"`
	ServerAllocs           int64   `json:"server_allocs"`
	ServerAllocBytesPerMiB float64 `json:"server_alloc_bytes_per_mib"`
	ServerAllocsPerRequest float64 `json:"server_allocs_per_request"`
	ClientAllocBytesPerMiB float64 `json:"client_alloc_bytes_per_mib"`
	ClientAllocsPerRequest float64 `json:"client_allocs_per_request"`

	// Peak resident set size of each process during the interval (VmHWM,
	// reset before the interval); -1 when unknown.
	ClientPeakRSSBytes int64 `json:"client_peak_rss_bytes"`
	ServerPeakRSSBytes int64 `json:"server_peak_rss_bytes"`

	// Source says where an imported step came from (rpclab import of a
	// published table); absent from steps rpclab measured. An imported
	// step has only what its source gave: sizes, checksum and host CPUs
	// 0 or empty when it did not say them, unknown CPU and memory -1.
	Source string `json:"source,omitempty"`
}

// BulkSpec is what was asked for in one bulk step.
type BulkSpec struct {
	Target string `json:"target"`
	// Transport is one of BulkTransports.
	Transport  string `json:"transport"`
	SizeBytes  int64  `json:"size_bytes"`
	ChunkBytes int    `json:"chunk_bytes"`
	// Streams is the number of concurrent downloads, each on its own
	// connection.
	Streams int `json:"streams"`
	// RequestsPerStream is the downloads each stream makes (0 when the
	// step runs for MinDurationNS instead).
	RequestsPerStream int   `json:"requests_per_stream"`
	MinDurationNS     int64 `json:"min_duration_ns"`
	// WarmupBytes is downloaded by each stream, verified and not measured,
	// before the interval.
	WarmupBytes int64 `json:"warmup_bytes"`
	// MaxMessageBytes is the gRPC client's max receive message size.
	MaxMessageBytes int `json:"max_message_bytes"`
	// Server names the server implementation when rpclab started it.
	Server string `json:"server,omitempty"`
	// Netem is the emulated network between client and server (a netem
	// proxy in front of each listener); absent on a direct path.
	Netem *NetemSpec `json:"netem,omitempty"`
	// TLS: every transport ran over TLS (rpclab bulk --tls); absent
	// (false) when they ran in plaintext.
	TLS bool `json:"tls,omitempty"`
}
