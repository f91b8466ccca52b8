// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rpclab/rpclab/docs"
	"github.com/rpclab/rpclab/result"
)

// Kind is the record kind of bulk steps.
const Kind = "bulk"

// Record is one measured bulk step: one transport, size, chunk and stream
// count. It is written as one JSON line, like result.Record, with the same
// schema_version, status values and env; docs/bulk.schema.json is its
// schema and docs/bulk.md documents every field.
type Record struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"` // always "bulk"
	Status        string    `json:"status"`
	Error         string    `json:"error,omitempty"`
	StartedAt     time.Time `json:"started_at"`

	Spec StepSpec   `json:"spec"`
	Env  result.Env `json:"env"`

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
}

// StepSpec is what was asked for in one step.
type StepSpec struct {
	Target string `json:"target"`
	// Transport is one of Transports.
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
	Netem *result.NetemSpec `json:"netem,omitempty"`
}

var schema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(docs.BulkSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://rpclab.dev/schema/bulk-v1.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// Validate checks one JSON-encoded bulk record against docs/bulk.schema.json.
func Validate(record []byte) error {
	s, err := schema()
	if err != nil {
		return fmt.Errorf("bulk: schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(record))
	if err != nil {
		return fmt.Errorf("bulk: not JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("bulk: does not match the bulk record schema: %w", err)
	}
	return nil
}

// WriteJSONL appends r to w as one JSON line; a file is synced, so a run
// that is killed keeps every record written so far.
func WriteJSONL(w io.Writer, r *Record) error {
	if err := json.NewEncoder(w).Encode(r); err != nil {
		return fmt.Errorf("bulk: write record: %w", err)
	}
	if f, ok := w.(*os.File); ok {
		_ = f.Sync()
	}
	return nil
}

// ReadJSONL reads bulk records, validating each line against the schema.
func ReadJSONL(rd io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var recs []Record
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := Validate(b); err != nil {
			return recs, fmt.Errorf("line %d: %w", line, err)
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			return recs, fmt.Errorf("bulk: line %d: %w", line, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return recs, fmt.Errorf("bulk: read: %w", err)
	}
	return recs, nil
}
