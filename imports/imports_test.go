// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package imports

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/result"
)

// The testdata files are written in each tool's format as its source
// prints it: YDB's client's two tables (PrintResultsTable, PrintResultsCSV),
// ghz's runner.Report as JSON, grpc-go's benchmark/stats dump.

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// valid checks that every record matches the result schema.
func valid(t *testing.T, recs []result.Record) {
	t.Helper()
	for i := range recs {
		b, err := json.Marshal(&recs[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := result.Validate(b); err != nil {
			t.Errorf("record %d: %v\n%s", i, err, b)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Format
	}{{"ydb-output.txt", YDBCSV}, {"ghz.json", GhzJSON}, {"benchmain.txt", Benchmain}} {
		if got, err := Detect(read(t, tc.file)); err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.file, got, err, tc.want)
		}
	}
	if got, err := Detect([]byte("\ninflight,rps\n1,2\n")); err != nil || got != YDBCSV {
		t.Errorf("a first line starting inflight,: got %q, %v; want %q, so its header is named", got, err, YDBCSV)
	}
	for _, in := range []string{"", "hello\n", `{"a":1}`, "rps,inflight\n1,2\n"} {
		_, err := Detect([]byte(in))
		if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "ydb-csv") ||
			!strings.Contains(err.Error(), "ghz-json") || !strings.Contains(err.Error(), "benchmain") {
			t.Errorf("Detect(%q): got %v, want ErrUnknownFormat naming the three formats", in, err)
		}
	}
}

func TestYDBCSV(t *testing.T) {
	csv := "inflight,throughput,p50,p90,p99,p99_9,p100\n1,10000.00,100,120,150,300,900\n10,37000.50,270,300,400,800,2000\n"
	for _, tc := range []struct {
		name string
		data string
		o    Options
	}{
		{"bare CSV", csv, Options{Source: "post"}},
		{"the client's whole output", string(read(t, "ydb-output.txt")), Options{Source: "run", RPC: "streaming", ConnMode: "local-pool", Target: "ydb:2135"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Parse([]byte(tc.data), "", tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 2 {
				t.Fatalf("got %d records, want 2", len(recs))
			}
			valid(t, recs)
			r := recs[1]
			if r.Source != tc.o.Source || r.Spec.Inflight == 1 || r.ConnsObserved != -1 || r.HistogramHDR != "" || r.ClientCPUNS != 0 {
				t.Errorf("got source %q, inflight %d, conns_observed %d, histogram %q, cpu %d; want %q, >1, -1, none, 0",
					r.Source, r.Spec.Inflight, r.ConnsObserved, r.HistogramHDR, r.ClientCPUNS, tc.o.Source)
			}
		})
	}
	recs, _ := Parse([]byte(csv), "", Options{Source: "post"})
	r := recs[1]
	if r.Spec.Inflight != 10 || r.ThroughputRPS != 37000.5 || r.Latency.P50NS != 270000 || r.Latency.P90NS != 300000 ||
		r.Latency.P99NS != 400000 || r.Latency.P999NS != 800000 || r.Latency.P100NS != 2000000 ||
		r.Spec.ConnMode != "shared" || r.Spec.ConnsRequested != 1 || r.Spec.RPC != "unary" || r.Spec.Target != "imported" || r.Spec.Service != "ydb-debug" {
		t.Errorf("got %+v %+v, want in-flight 10, 37000.5 req/s, µs as ns, shared unary on ydb-debug", r.Spec, r.Latency)
	}
	recs, _ = Parse(read(t, "ydb-output.txt"), YDBCSV, Options{Source: "run", ConnMode: "local-pool", RPC: "streaming"})
	if r := recs[1]; r.Spec.ConnsRequested != 2 || r.Spec.RPC != "streaming" || r.ThroughputRPS != 18000 {
		t.Errorf("local-pool streaming: got %+v, want 2 connections requested at in-flight 2", r.Spec)
	}
}

// TestYDBCSVBadInput: each mistake is named with its line; nothing is
// returned with it.
func TestYDBCSVBadInput(t *testing.T) {
	const h = "inflight,throughput,p50,p90,p99,p99_9,p100\n"
	for _, tc := range []struct {
		name, data, want string
	}{
		{"wrong header", "inflight,rps,p50\n1,2,3\n", `line 1: want YDB's CSV header`},
		{"header after blank lines", "\n\ninflight,throughput,p50,p90,p99,p99_9\n", `line 3: want YDB's CSV header`},
		{"short row", h + "1,10000,100,120,150,300,900\n2,18000,110,130\n", "line 3: want 7 fields"},
		{"long row", h + "1,10000,100,120,150,300,900,5\n", "line 2: want 7 fields"},
		{"not a number", h + "1,lots,100,120,150,300,900\n", `line 2: throughput "lots" is not a number`},
		{"negative", h + "1,100,-1,120,150,300,900\n", `line 2: p50 "-1" is not a number`},
		{"fractional in-flight", h + "1.5,100,1,2,3,4,5\n", `line 2: inflight "1.5" is not a count`},
		{"zero in-flight", h + "0,100,1,2,3,4,5\n", `line 2: inflight "0" is not a count`},
		{"in-flight twice", h + "1,100,1,2,3,4,5\n1,100,1,2,3,4,5\n", "line 3: inflight 1 again (first on line 2)"},
		{"percentiles out of order", h + "1,100,5,4,6,7,8\n", "line 2: p90 4 µs is below p50 5 µs"},
		{"header only", h, "has a header but no rows"},
		{"CSV Results: without a header", "CSV Results:\n", "no YDB CSV header"},
		{"NaN", h + "1,NaN,1,2,3,4,5\n", `throughput "NaN" is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := ParseYDBCSV([]byte(tc.data), Options{Source: "x"})
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) || recs != nil {
				t.Errorf("got %d records, %v; want ErrBadInput containing %q", len(recs), err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte(h+"1,1,1,1,1,1,1\n"), YDBCSV, Options{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "a source is required") {
		t.Errorf("no source: got %v, want it refused", err)
	}
	for _, o := range []Options{{Source: "x", RPC: "bidi"}, {Source: "x", ConnMode: "pool"}} {
		if _, err := ParseYDBCSV([]byte(h+"1,1,1,1,1,1,1\n"), o); !errors.Is(err, ErrBadInput) {
			t.Errorf("%+v: got %v, want ErrBadInput", o, err)
		}
	}
}

func TestGhz(t *testing.T) {
	recs, err := Parse(read(t, "ghz.json"), "", Options{Source: "ghz run"})
	if err != nil {
		t.Fatal(err)
	}
	valid(t, recs)
	r := recs[0]
	if r.Spec.Inflight != 16 || r.Spec.ConnMode != "pool" || r.Spec.ConnsRequested != 4 || r.Spec.Target != "127.0.0.1:50051" ||
		r.Spec.Call != "grpc.testing.BenchmarkService.UnaryCall" || r.Requests != 20000 || r.Errors["Unavailable"] != 100 ||
		r.ThroughputRPS != 9950 || r.DurationNS != 2e9 || r.Latency.P50NS != 1400000 || r.Latency.P90NS != 2500000 ||
		r.Latency.P99NS != 5000000 || r.Latency.MinNS != 200000 || r.Latency.P100NS != 9000000 || r.Source != "ghz run" ||
		r.StartedAt.Year() != 2026 || r.Env.HostCPUs != 2 {
		t.Errorf("got %+v", r)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", `{"latencyDistribution": [`, "ghz JSON"},
		{"no calls", `{"count":0,"total":0,"latencyDistribution":[]}`, "no calls to import"},
		{"no concurrency", `{"count":5,"total":100,"latencyDistribution":[]}`, "options.concurrency 0"},
		{"no percentiles", `{"count":5,"total":100,"options":{"concurrency":1},"statusCodeDistribution":{"OK":5},"latencyDistribution":[]}`, "lacks a P50 and P99"},
	} {
		if _, err := ParseGhz([]byte(tc.data), Options{Source: "x"}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrBadInput containing %q", tc.name, err, tc.want)
		}
	}
}

func TestBenchmain(t *testing.T) {
	recs, err := Parse(read(t, "benchmain.txt"), "", Options{Source: "benchmain"})
	if err != nil {
		t.Fatal(err)
	}
	valid(t, recs)
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	u, s := recs[0], recs[1]
	if u.Spec.RPC != "unary" || u.Spec.Inflight != 16 || u.Spec.ConnMode != "pool" || u.Spec.ConnsRequested != 2 ||
		u.Requests != 1000000 || u.ThroughputRPS != 100000 || u.Latency.P50NS != 81212 || u.Latency.P99NS != 189147 ||
		u.Latency.MeanNS != 86455 || u.Env.GRPCVersion != "1.85.0" || u.Env.RuntimeVersion != "go1.26.8" || u.Spec.PayloadBytes != 1 {
		t.Errorf("unary: got %+v", u)
	}
	if s.Spec.RPC != "streaming" || s.Spec.Inflight != 1 || s.Spec.ConnMode != "shared" || s.ThroughputRPS != 25000 || s.Latency.P90NS != 50000 {
		t.Errorf("stream: got %+v", s)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"unconstrained", "Unconstrained-benchTime_1s-maxConcurrentCalls_1:\n", "line 1: an Unconstrained benchmain run"},
		{"no benchTime", "Unary-maxConcurrentCalls_1-connections_1:\n50_Latency: 1µs\nNumber of requests: 5\n", "line 1: no benchTime"},
		{"no calls", "Unary-benchTime_1s-connections_1:\n", "line 1: no maxConcurrentCalls"},
		{"no latency", "Unary-benchTime_1s-maxConcurrentCalls_1:\nNumber of requests: 5\n", "line 1: benchmain run without latencies"},
		{"no run", "Number of requests: 5\n50_Latency: 1µs\n", "no benchmain run"},
	} {
		if _, err := ParseBenchmain([]byte(tc.data), Options{Source: "x"}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrBadInput containing %q", tc.name, err, tc.want)
		}
	}
}

// FuzzParseYDBCSV: any input either parses into records that match the
// schema, one per in-flight count, or fails with ErrBadInput; never a
// panic.
func FuzzParseYDBCSV(f *testing.F) {
	f.Add([]byte("inflight,throughput,p50,p90,p99,p99_9,p100\n1,10000.00,100,120,150,300,900\n"))
	f.Add([]byte("CSV Results:\ninflight,throughput,p50,p90,p99,p99_9,p100\n2,1,1,1,1,1,1\n\n3,1,1,1,1,1,1\n"))
	f.Add([]byte("inflight,throughput,p50,p90,p99,p99_9,p100\n1,1e308,1e308,1e308,1e308,1e308,1e308\n"))
	f.Add([]byte("inflight,throughput,p50,p90,p99,p99_9,p100\n1,,,,,,\n"))
	f.Add([]byte("inflight,throughput,p50,p90,p99,p99_9,p100\n9999999999,1,1,1,1,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseYDBCSV(data, Options{Source: "fuzz"})
		if err != nil {
			if !errors.Is(err, ErrBadInput) || recs != nil {
				t.Fatalf("got %d records and %v, want none and ErrBadInput", len(recs), err)
			}
			return
		}
		seen := map[int]bool{}
		for i := range recs {
			if n := recs[i].Spec.Inflight; n < 1 || seen[n] {
				t.Fatalf("record %d: in-flight %d (seen: %v)", i, n, seen[n])
			}
			seen[recs[i].Spec.Inflight] = true
			b, err := json.Marshal(&recs[i])
			if err != nil {
				t.Fatal(err)
			}
			if err := result.Validate(b); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		}
	})
}

// TestSchemaImportedOnly: the schema lets an imported record (with a
// source) leave the interval and the host's CPUs at 0, as its source may
// not say them; a measured record (no source) must have both.
func TestSchemaImportedOnly(t *testing.T) {
	recs, err := ParseYDBCSV([]byte("inflight,throughput,p50,p90,p99,p99_9,p100\n1,1,1,1,1,1,1\n"), Options{Source: "post"})
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	for _, tc := range []struct {
		name   string
		source string
		edit   func(*result.Record)
		ok     bool
	}{
		{"imported", "post", func(*result.Record) {}, true},
		{"measured, no interval", "", func(r *result.Record) { r.Env.HostCPUs = 2 }, false},
		{"measured, no host CPUs", "", func(r *result.Record) { r.Spec.IntervalNS = 1e9 }, false},
		{"measured, both", "", func(r *result.Record) { r.Env.HostCPUs, r.Spec.IntervalNS = 2, 1e9 }, true},
	} {
		c := r
		c.Source = tc.source
		tc.edit(&c)
		b, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		if err := result.Validate(b); (err == nil) != tc.ok {
			t.Errorf("%s: got %v, want valid %v", tc.name, err, tc.ok)
		}
	}
}
