// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package imports turns other tools' results into rpclab result records, so
// that a published or foreign curve can be drawn and judged beside a local
// run: YDB's grpc_ping_client CSV (from YDB's post, from YDB's client, or
// from rpclab's C++ client in YDB mode), ghz's JSON report, and grpc-go's
// benchmain output. Every record says where it came from (Record.Source);
// a field the source does not have is left empty (no histogram, no client
// CPU, connections not observed).
package imports

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rpclab/rpclab/result"
)

// Format names an input format.
type Format string

// The formats Parse knows.
const (
	// YDBCSV is YDB's grpc_ping_client CSV: the header
	// inflight,throughput,p50,p90,p99,p99_9,p100 (latencies in µs), one
	// row per in-flight count; alone, or after "CSV Results:" in the
	// client's whole output.
	YDBCSV Format = "ydb-csv"
	// GhzJSON is ghz's report (ghz --format json).
	GhzJSON Format = "ghz-json"
	// Benchmain is grpc-go's benchmark/benchmain output: one block per
	// run, its features on one line, then 50_Latency ... and the number
	// of requests.
	Benchmain Format = "benchmain"
)

// Formats lists the known formats, in the order Detect tries them.
var Formats = []Format{YDBCSV, GhzJSON, Benchmain}

// Known names every format with what it is, for error messages and help.
const Known = "ydb-csv (YDB's grpc_ping_client CSV, header " + ydbHeader + ", latencies in µs), " +
	"ghz-json (ghz --format json) and benchmain (grpc-go's benchmark/benchmain output)"

// Options describe what the source does not say about itself. Zero values
// take each format's defaults.
type Options struct {
	// Source says where the records came from (a post, a file); every
	// record carries it. Parse requires it.
	Source string
	// Target names what was measured when the source does not (YDB's CSV,
	// benchmain); default "imported".
	Target string
	// RPC is "unary" or "streaming" for YDB's CSV (default "unary").
	RPC string
	// ConnMode is YDB's CSV's connection layout (default "shared": YDB's
	// client without --local-pool puts every channel on one connection);
	// "local-pool" makes ConnsRequested the in-flight count.
	ConnMode string
}

// Detect names the format of data: YDB's CSV header (or its "CSV
// Results:" line, or a first line starting "inflight,", so that a wrong
// header is named as such), a JSON object with ghz's latencyDistribution,
// or benchmain's "_Latency:" lines.
func Detect(data []byte) (Format, error) {
	text := string(data)
	trim := bytes.TrimSpace(data)
	switch {
	case strings.Contains(text, ydbHeader) || strings.Contains(text, "CSV Results:") || strings.HasPrefix(string(trim), "inflight,"):
		return YDBCSV, nil
	case len(trim) > 0 && trim[0] == '{' && bytes.Contains(data, []byte(`"latencyDistribution"`)):
		return GhzJSON, nil
	case strings.Contains(text, "50_Latency:") && strings.Contains(text, "Number of requests:"):
		return Benchmain, nil
	}
	return "", fmt.Errorf("%w: it knows %s", ErrUnknownFormat, Known)
}

// Parse turns data, of format f (Detect's when empty), into records.
func Parse(data []byte, f Format, o Options) ([]result.Record, error) {
	if strings.TrimSpace(o.Source) == "" {
		return nil, fmt.Errorf("%w: a source is required (where the numbers come from)", ErrBadInput)
	}
	if f == "" {
		var err error
		if f, err = Detect(data); err != nil {
			return nil, err
		}
	}
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
		return nil, fmt.Errorf("%w: format %q: it knows %s", ErrUnknownFormat, f, Known)
	}
	if err != nil {
		return nil, err
	}
	return recs, nil
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
