// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package foreign turns other tools' results and published tables into
// rpclab result records, so that a published or foreign curve can be drawn
// and judged beside a local run: YDB's grpc_ping_client CSV (from YDB's
// post, from YDB's client's whole output, or from rpclab's C++ client in
// YDB mode), ghz's JSON report, grpc-go's benchmain output, and the three
// other published tables of ../shared/published (grpc-go's flow-control
// post, a Go gateway's connection pool, Gitaly's fetch traffic). Every
// record says where it came from (its Source); a field the source does not
// have is left empty (no histogram, no client CPU, connections not
// observed). Parse checks what each format makes impossible and every
// record with result.Check (its kind's schema and its own arithmetic)
// before it returns any.
package foreign

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
)

// Format names an input format.
type Format string

// The formats Parse knows.
const (
	// YDBCSV is YDB's grpc_ping_client CSV: the header
	// inflight,throughput,p50,p90,p99,p99_9,p100 (latencies in µs), one
	// row per in-flight count; alone, or in the client's whole output
	// (a block per step, then the tables, the CSV after "CSV Results:").
	YDBCSV Format = "ydb-csv"
	// GhzJSON is ghz's report (ghz --format json), one or several
	// concatenated.
	GhzJSON Format = "ghz-json"
	// Benchmain is grpc-go's benchmark/benchmain output: one block per
	// run, its features on one line, then 50_Latency ... and the number
	// of requests.
	Benchmain Format = "benchmain"
	// FlowCSV is the grpc-go flow-control post's table of the first RPCs
	// on a fresh connection: header rtt_ms,rpc_index,grpc_ms,http2_ms,
	// http1_ms (milliseconds); flow records.
	FlowCSV Format = "grpc-go-flow-csv"
	// GatewayCSV is the Go gateway write-up's table: header
	// clients,goroutines,requests,qps; closed-loop ping records.
	GatewayCSV Format = "go-gateway-csv"
	// GitalyCSV is Gitaly's fetch-traffic table: header repository,server,
	// pack_objects_cache,egress_mb_s,system_load_per_cpu,
	// cpu_utilization_pct; bulk records.
	GitalyCSV Format = "gitaly-csv"
)

// Formats lists the known formats, in the order Detect tries them.
var Formats = []Format{YDBCSV, FlowCSV, GatewayCSV, GitalyCSV, GhzJSON, Benchmain}

// headers are the CSV formats' headers; Detect knows a CSV format by its
// header's first column.
var headers = map[Format]string{YDBCSV: ydbHeader, FlowCSV: flowHeader, GatewayCSV: gatewayHeader, GitalyCSV: gitalyHeader}

// Known names every format with what it is, for error messages and help.
const Known = "ydb-csv (YDB's grpc_ping_client CSV or whole output, header " + ydbHeader + ", latencies in µs), " +
	"grpc-go-flow-csv (header " + flowHeader + "), go-gateway-csv (header " + gatewayHeader + "), " +
	"gitaly-csv (header " + gitalyHeader + "), " +
	"ghz-json (ghz --format json) and benchmain (grpc-go's benchmark/benchmain output)"

// Options describe what the source does not say about itself. Zero values
// take each format's defaults.
type Options struct {
	// Source says where the records came from (a post, a file); every
	// record carries it. Parse requires it.
	Source string
	// Target names what was measured when the source does not (YDB's CSV,
	// benchmain, the gateway's table); default "imported" (the gateway:
	// "Go gRPC gateway (published)").
	Target string
	// RPC is "unary" or "streaming" for YDB's CSV (default "unary").
	RPC string
	// ConnMode is YDB's CSV's connection layout: empty for what the input
	// says (a step on one channel is shared, on more channel-per-worker;
	// a bare CSV says no channels: shared), "local-pool" for a run with
	// --local-pool (its output does not say it), or "shared" or
	// "channel-per-worker" to name a bare CSV's layout.
	ConnMode string
}

// Detect names the format of data: by its first non-blank line for the
// CSV formats (a first line starting with a header's first column, such
// as "inflight,", is that format, so that a wrong header is named as
// such), YDB's whole output by its "CSV Results:" or "Running benchmark
// with" lines, a JSON object with ghz's latencyDistribution, or
// benchmain's "_Latency:" lines. Empty input is an error at line 1,
// column 1.
func Detect(data []byte) (Format, error) {
	text := string(data)
	trim := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\ufeff")))
	if len(trim) == 0 {
		return "", fmt.Errorf("%w: line 1, column 1: the input is empty; rpclab import knows %s", ErrUnknownFormat, Known)
	}
	first, _, _ := strings.Cut(string(trim), "\n")
	first = strings.TrimSpace(first)
	for _, f := range Formats {
		if h, ok := headers[f]; ok {
			col, _, _ := strings.Cut(h, ",")
			if first == h || strings.HasPrefix(first, col+",") {
				return f, nil
			}
		}
	}
	switch {
	case strings.Contains(text, ydbHeader) || strings.Contains(text, "CSV Results:") || strings.Contains(text, "Running benchmark with "):
		return YDBCSV, nil
	case trim[0] == '{' && bytes.Contains(data, []byte(`"latencyDistribution"`)):
		return GhzJSON, nil
	case strings.Contains(text, "50_Latency:") && strings.Contains(text, "Number of requests:"):
		return Benchmain, nil
	}
	return "", fmt.Errorf("%w: line 1, column 1: %.40q is no header or output it knows: it knows %s", ErrUnknownFormat, first, Known)
}

// Parse turns data, of format f (Detect's when empty), into records:
// *result.Record, *result.BulkRecord or *result.FlowRecord by format. Each
// record is checked with result.Check; none is returned unless all
// are valid.
func Parse(data []byte, f Format, o Options) ([]result.Kinded, error) {
	if strings.TrimSpace(o.Source) == "" {
		return nil, fmt.Errorf("%w: a source is required (where the numbers come from)", ErrBadInput)
	}
	if f == "" {
		var err error
		if f, err = Detect(data); err != nil {
			return nil, err
		}
	}
	var out []result.Kinded
	switch f {
	case YDBCSV, GhzJSON, Benchmain, GatewayCSV:
		var recs []result.Record
		var err error
		switch f {
		case YDBCSV:
			recs, err = ParseYDBCSV(data, o)
		case GhzJSON:
			recs, err = ParseGhz(data, o)
		case Benchmain:
			recs, err = ParseBenchmain(data, o)
		default:
			recs, err = ParseGatewayCSV(data, o)
		}
		if err != nil {
			return nil, err
		}
		for i := range recs {
			if err := saneErrors(&recs[i]); err != nil {
				return nil, fmt.Errorf("%w: record %d: %v", ErrBadInput, i+1, err)
			}
			out = append(out, &recs[i])
		}
	case FlowCSV:
		recs, err := ParseFlowCSV(data, o)
		if err != nil {
			return nil, err
		}
		for i := range recs {
			out = append(out, &recs[i])
		}
	case GitalyCSV:
		recs, err := ParseGitalyCSV(data, o)
		if err != nil {
			return nil, err
		}
		for i := range recs {
			out = append(out, &recs[i])
		}
	default:
		return nil, fmt.Errorf("%w: format %q: it knows %s", ErrUnknownFormat, f, Known)
	}
	for i, r := range out {
		// result.Check: the schema and the record's own arithmetic, as
		// every producer checks before it writes.
		if err := result.Check(r); err != nil {
			return nil, fmt.Errorf("%w: record %d: %v", ErrBadInput, i+1, err)
		}
	}
	return out, nil
}

// saneErrors refuses a ping record that counts more failed calls than
// calls, or a negative count (the schema checks the rest).
func saneErrors(r *result.Record) error {
	var failed int64
	for code, n := range r.Errors {
		if n < 0 {
			return fmt.Errorf("%d %s errors", n, code)
		}
		failed += n
	}
	if failed > r.Requests {
		return fmt.Errorf("%d failed calls out of %d", failed, r.Requests)
	}
	return nil
}

// base is a successful closed-loop ping record with the fields no source
// gives filled as "unknown": connections not observed (-1), no histogram,
// no client CPU.
func base(o Options) result.Record {
	return result.Record{
		SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
		Spec:          result.Spec{Target: or(o.Target, "imported"), RPC: "unary", ConnMode: "shared", ConnsRequested: 1, LoadModel: "closed"},
		Errors:        map[string]int64{},
		ConnsObserved: -1,
		Source:        o.Source,
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
