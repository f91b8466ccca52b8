// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package foreign

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
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
		data string
		want Format
	}{
		{string(read(t, "ydb-output.txt")), YDBCSV},
		{string(read(t, "ghz.json")), GhzJSON},
		{string(read(t, "benchmain.txt")), Benchmain},
		{"\ninflight,rps\n1,2\n", YDBCSV},
		{flowHeader + "\n0,1,1,1,1\n", FlowCSV},
		{"rtt_ms,index\n", FlowCSV},
		{gatewayHeader + "\n1,1,1,1\n", GatewayCSV},
		{"clients,callers\n", GatewayCSV},
		{gitalyHeader + "\n", GitalyCSV},
		{"\ufeffrepository,server\n", GitalyCSV},
		{"Running benchmark with 1 concurrent requests using 1 channels...\n", YDBCSV},
	} {
		if got, err := Detect([]byte(tc.data)); err != nil || got != tc.want {
			t.Errorf("Detect(%.30q): got %q, %v; want %q", tc.data, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "line 1, column 1: the input is empty"},
		{" \n\n", "line 1, column 1: the input is empty"},
		{"hello\n", `line 1, column 1: "hello" is no header`},
		{`{"a":1}`, "line 1, column 1"},
		{"rps,inflight\n1,2\n", "line 1, column 1"},
	} {
		_, err := Detect([]byte(tc.in))
		if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Detect(%q): got %v, want ErrUnknownFormat containing %q", tc.in, err, tc.want)
		}
		for _, f := range Formats {
			if !strings.Contains(err.Error(), string(f)) {
				t.Errorf("Detect(%q): got %v, want every format named (%s missing)", tc.in, err, f)
			}
		}
	}
}

// pings asserts every record is a ping record.
func pings(t *testing.T, ks []result.Kinded) []result.Record {
	t.Helper()
	var out []result.Record
	for _, k := range ks {
		r, ok := k.(*result.Record)
		if !ok {
			t.Fatalf("got a %T, want *result.Record", k)
		}
		out = append(out, *r)
	}
	return out
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
			ks, err := Parse([]byte(tc.data), "", tc.o)
			if err != nil {
				t.Fatal(err)
			}
			recs := pings(t, ks)
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
	recs, _ := ParseYDBCSV([]byte(csv), Options{Source: "post"})
	r := recs[1]
	if r.Spec.Inflight != 10 || r.ThroughputRPS != 37000.5 || r.Latency.P50NS != 270000 || r.Latency.P90NS != 300000 ||
		r.Latency.P99NS != 400000 || r.Latency.P999NS != 800000 || r.Latency.P100NS != 2000000 ||
		r.Spec.ConnMode != "shared" || r.Spec.ConnsRequested != 1 || r.Spec.RPC != "unary" || r.Spec.Target != "imported" || r.Spec.Service != "ydb-debug" {
		t.Errorf("got %+v %+v, want in-flight 10, 37000.5 req/s, µs as ns, shared unary on ydb-debug", r.Spec, r.Latency)
	}
}

// TestYDBOutputLayouts: YDB's whole output labels each step by the
// channels it printed ("using N channels"): one is shared, more are
// channel-per-worker (its default) or local-pool (--local-pool); a bare
// CSV is shared unless a layout is named. Each step's block gives its
// request count and time.
func TestYDBOutputLayouts(t *testing.T) {
	type step struct {
		mode     string
		conns    int
		requests int64
		dur      int64
	}
	csv := "inflight,throughput,p50,p90,p99,p99_9,p100\n1,1,1,1,1,1,1\n2,1,1,1,1,1,1\n"
	out := read(t, "ydb-output.txt")
	for _, tc := range []struct {
		name string
		data []byte
		mode string
		want []step
	}{
		{"default run", out, "", []step{{"shared", 1, 100000, 10000212000}, {"channel-per-worker", 2, 180000, 10000349000}}},
		{"--local-pool run", out, "local-pool", []step{{"shared", 1, 100000, 10000212000}, {"local-pool", 2, 180000, 10000349000}}},
		{"channel-per-worker named", out, "channel-per-worker", []step{{"shared", 1, 100000, 10000212000}, {"channel-per-worker", 2, 180000, 10000349000}}},
		{"bare CSV", []byte(csv), "", []step{{"shared", 1, 0, 0}, {"shared", 1, 0, 0}}},
		{"bare CSV, local-pool", []byte(csv), "local-pool", []step{{"shared", 1, 0, 0}, {"local-pool", 2, 0, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := ParseYDBCSV(tc.data, Options{Source: "x", ConnMode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			var got []step
			for _, r := range recs {
				got = append(got, step{r.Spec.ConnMode, r.Spec.ConnsRequested, r.Requests, r.DurationNS})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := ParseYDBCSV(out, Options{Source: "x", ConnMode: "shared"}); !errors.Is(err, ErrBadInput) ||
		!strings.Contains(err.Error(), "line 16, column 1: in-flight 2 used 2 channels") {
		t.Errorf("--conn shared on a 2-channel step: got %v, want it refused at its block's line", err)
	}
}

// TestYDBOutputLikeCppClient: rpclab's C++ client in YDB mode printed
// experiments/ydb/2026-11-23/ydb-local-1-21.txt and recorded
// ydb-local-1-21.jsonl; importing what it printed gives every step the
// layout, connections requested and request count it recorded, so YDB's
// client's output and rpclab's overlay as one layout.
func TestYDBOutputLikeCppClient(t *testing.T) {
	dir := filepath.Join("..", "..", "experiments", "ydb", "2026-11-23")
	text, err := os.ReadFile(filepath.Join(dir, "ydb-local-1-21.txt"))
	if err != nil {
		t.Fatal(err)
	}
	measured, err := result.ReadFile(filepath.Join(dir, "ydb-local-1-21.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	imported, err := ParseYDBCSV(text, Options{Source: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(imported) != len(measured) || len(measured) != 21 {
		t.Fatalf("got %d imported and %d measured steps, want 21 each", len(imported), len(measured))
	}
	for i := range measured {
		m, r := measured[i], imported[i]
		if r.Spec.Inflight != m.Spec.Inflight || r.Spec.ConnMode != m.Spec.ConnMode || r.Spec.ConnsRequested != m.Spec.ConnsRequested || r.Requests != m.Requests {
			t.Errorf("in-flight %d: imported %s x%d, %d requests; recorded %s x%d, %d requests", m.Spec.Inflight,
				r.Spec.ConnMode, r.Spec.ConnsRequested, r.Requests, m.Spec.ConnMode, m.Spec.ConnsRequested, m.Requests)
		}
	}
}

// TestYDBCSVBadInput: each mistake is named with its line and column;
// nothing is returned with it.
func TestYDBCSVBadInput(t *testing.T) {
	const h = "inflight,throughput,p50,p90,p99,p99_9,p100\n"
	out := string(read(t, "ydb-output.txt"))
	for _, tc := range []struct {
		name, data, want string
	}{
		{"wrong header", "inflight,rps,p50\n1,2,3\n", `line 1, column 2: header column "rps", want "throughput"`},
		{"header after blank lines", "\n\ninflight,throughput,p50,p90,p99,p99_9\n", `line 3, column 7: header ends after 6 columns`},
		{"short row", h + "1,10000,100,120,150,300,900\n2,18000,110,130\n", "line 3, column 5: short row: 4 fields, want 7 (p99 missing)"},
		{"long row", h + "1,10000,100,120,150,300,900,5\n", "line 2, column 8: long row"},
		{"not a number", h + "1,lots,100,120,150,300,900\n", `line 2, column 2: throughput "lots" is not a number`},
		{"negative", h + "1,100,-1,120,150,300,900\n", `line 2, column 3: p50 -1 is outside 0..1e+12`},
		{"fractional in-flight", h + "1.5,100,1,2,3,4,5\n", `line 2, column 1: inflight 1.5 is not a whole number`},
		{"zero in-flight", h + "0,100,1,2,3,4,5\n", `line 2, column 1: inflight 0 is outside 1..`},
		{"in-flight twice", h + "1,100,1,2,3,4,5\n1,100,1,2,3,4,5\n", "line 3, column 1: inflight 1 again (first on line 2)"},
		{"percentiles out of order", h + "1,100,5,4,6,7,8\n", "line 2, column 4: p90 4 µs is below p50 5 µs"},
		{"header only", h, "line 2, column 1: a header but no rows"},
		{"empty", "", "line 1, column 1: empty"},
		{"CSV Results: without a header", "CSV Results:\n", "line 2, column 1: empty: want the header"},
		{"NaN", h + "1,NaN,1,2,3,4,5\n", `line 2, column 2: throughput "NaN" is not a number`},
		{"output without --with-csv", out[:strings.Index(out, "\nCSV Results:")], `no "CSV Results:" line: run its client with --with-csv`},
		{"output without a step's block", strings.Replace(out, "Running benchmark with 2 concurrent requests using 2 channels...", "", 1),
			`line 39, column 1: in-flight 2 has no "Running benchmark with 2 concurrent requests" block`},
		{"step without its totals", strings.Replace(out, "Total requests: 180000", "", 1), `line 16, column 1: the step at in-flight 2 has no "Total requests:"`},
		{"more channels than in-flight", strings.Replace(out, "using 2 channels", "using 3 channels", 1), "line 16, column 1"},
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

// TestPublishedFormats: each published table's format reads its rows into
// the record kind that fits, each value where it belongs.
func TestPublishedFormats(t *testing.T) {
	flowCSV := flowHeader + "\n0,1,5,16,18\n0,2,4,4,7\n64,1,455.072669,275,208\n64,2,195,70,70\n64,3,132,70,71\n64,4,69.239273,70,69\n"
	ks, err := Parse([]byte(flowCSV), "", Options{Source: "post"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 6 {
		t.Fatalf("flow: got %d records, want 6 (3 transports x 2 RTTs)", len(ks))
	}
	var got []string
	for _, k := range ks {
		f := k.(*result.FlowRecord)
		got = append(got, fmt.Sprintf("%s@%v:%d first %d steady %d from %d %s", f.Transport, time.Duration(f.RTTNS), len(f.RPCNS), f.FirstNS, f.SteadyNS, f.SteadyFrom, f.Source))
	}
	want := []string{
		"grpc-dynamic@0s:2 first 5000000 steady 4000000 from 2 post", "h2c@0s:2 first 16000000 steady 4000000 from 2 post", "http1@0s:2 first 18000000 steady 7000000 from 2 post",
		"grpc-dynamic@64ms:4 first 455072669 steady 100619636 from 3 post", "h2c@64ms:4 first 275000000 steady 70000000 from 3 post", "http1@64ms:4 first 208000000 steady 70000000 from 3 post",
	}
	if !slices.Equal(got, want) {
		t.Errorf("flow: got %q, want %q", got, want)
	}

	ks, err = Parse([]byte(gatewayHeader+"\n1,100,1000000,80752\n50,250,1000000,217028\n"), "", Options{Source: "post"})
	if err != nil {
		t.Fatal(err)
	}
	recs := pings(t, ks)
	valid(t, recs)
	if r := recs[0]; r.Spec.ConnMode != "shared" || r.Spec.ConnsRequested != 1 || r.Spec.Inflight != 100 || r.Spec.LoadModel != "closed" ||
		r.Requests != 1000000 || r.ThroughputRPS != 80752 || r.DurationNS != 12383594214 || r.Env.Language != "go" {
		t.Errorf("gateway, one ClientConn: got %+v", r)
	}
	if r := recs[1]; r.Spec.ConnMode != "pool" || r.Spec.ConnsRequested != 50 || r.Spec.Pick != "round-robin" || r.Spec.Inflight != 250 ||
		result.ConnLabel(r.Spec.ConnMode, r.Spec.ConnsRequested, r.Spec.Pick) != "pool:50" {
		t.Errorf("gateway, 50 ClientConns: got %+v", r.Spec)
	}

	ks, err = Parse([]byte(gitalyHeader+"\ngitlab-org/gitlab,gitaly-grpc,on,1075,1.14,73\ngitlab-org/gitlab,rpctest-tcp,on,3910,0.65,59\n"), "", Options{Source: "issue"})
	if err != nil {
		t.Fatal(err)
	}
	g, tcp := ks[0].(*result.BulkRecord), ks[1].(*result.BulkRecord)
	if g.Spec.Transport != "grpc" || tcp.Spec.Transport != "tcp" || g.ThroughputBytesPerS != 1075e6 || tcp.ThroughputBytesPerS != 3910e6 ||
		g.Spec.Target != "gitlab-org/gitlab (pack-objects cache on)" || g.Spec.Server != "gitaly-grpc" || g.Spec.Streams != 30 ||
		g.Source != "issue; server load 1.14 per CPU, CPU 73% non-idle" || g.ServerCPUNS != -1 {
		t.Errorf("gitaly: got %+v and %+v", g, tcp)
	}
}

// TestPublishedFormatsBadInput: for each published table's format, a
// wrong header, a short row, a non-number and an empty file are errors
// naming the line and the column; nothing is returned with them.
func TestPublishedFormatsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format Format
		data   string
		want   string
	}{
		{"flow: wrong header", FlowCSV, "rtt_ms,rpc,grpc_ms,http2_ms,http1_ms\n0,1,1,1,1\n", `line 1, column 2: header column "rpc", want "rpc_index"`},
		{"flow: short row", FlowCSV, flowHeader + "\n0,1,1,1,1\n0,2,1\n", "line 3, column 4: short row: 3 fields, want 5 (http2_ms missing)"},
		{"flow: not a number", FlowCSV, flowHeader + "\n0,1,1,fast,1\n", `line 2, column 4: http2_ms "fast" is not a number`},
		{"flow: empty", FlowCSV, "", "line 1, column 1: empty"},
		{"flow: RPCs out of order", FlowCSV, flowHeader + "\n0,1,1,1,1\n0,3,1,1,1\n", "line 3, column 2: rpc_index 3, want 2"},
		{"flow: an RTT twice", FlowCSV, flowHeader + "\n0,1,1,1,1\n16,1,1,1,1\n0,1,1,1,1\n", "line 4, column 1: rtt_ms 0 again"},
		{"flow: negative", FlowCSV, flowHeader + "\n0,1,-1,1,1\n", "line 2, column 3: grpc_ms -1 is outside"},
		{"gateway: wrong header", GatewayCSV, "clients,goroutines,qps,requests\n1,1,1,1\n", `line 1, column 3: header column "qps", want "requests"`},
		{"gateway: short row", GatewayCSV, gatewayHeader + "\n1,50,1000000\n", "line 2, column 4: short row: 3 fields, want 4 (qps missing)"},
		{"gateway: not a number", GatewayCSV, gatewayHeader + "\n1,50,many,68829\n", `line 2, column 3: requests "many" is not a number`},
		{"gateway: empty", GatewayCSV, "\n\n", "line 1, column 1: empty"},
		{"gateway: more conns than callers", GatewayCSV, gatewayHeader + "\n100,50,1000,1\n", "line 2, column 1: clients 100 above goroutines 50"},
		{"gateway: zero qps", GatewayCSV, gatewayHeader + "\n1,50,1000,0\n", "line 2, column 4: qps 0"},
		{"gateway: fractional callers", GatewayCSV, gatewayHeader + "\n1,50.5,1000,1\n", "line 2, column 2: goroutines 50.5 is not a whole number"},
		{"gitaly: wrong header", GitalyCSV, "repository,server,cache,egress_mb_s,system_load_per_cpu,cpu_utilization_pct\n", `line 1, column 3: header column "cache"`},
		{"gitaly: short row", GitalyCSV, gitalyHeader + "\nr,gitaly-grpc,on,920\n", "line 2, column 5: short row: 4 fields, want 6 (system_load_per_cpu missing)"},
		{"gitaly: not a number", GitalyCSV, gitalyHeader + "\nr,gitaly-grpc,on,920,1.4,lots\n", `line 2, column 6: cpu_utilization_pct "lots" is not a number`},
		{"gitaly: empty", GitalyCSV, "", "line 1, column 1: empty"},
		{"gitaly: unknown server", GitalyCSV, gitalyHeader + "\nr,gitaly-http,on,920,1.4,50\n", `line 2, column 2: server "gitaly-http": want one of gitaly-grpc, rpctest-tcp`},
		{"gitaly: CPU above 100%", GitalyCSV, gitalyHeader + "\nr,gitaly-grpc,on,920,1.4,101\n", "line 2, column 6: cpu_utilization_pct 101 is outside 0..100"},
		{"gitaly: a cell twice", GitalyCSV, gitalyHeader + "\nr,gitaly-grpc,on,920,1.4,50\nr,gitaly-grpc,on,920,1.4,50\n", "line 3, column 1: r, gitaly-grpc, cache on again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Parse([]byte(tc.data), tc.format, Options{Source: "x"})
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) || recs != nil {
				t.Errorf("got %d records, %v; want ErrBadInput containing %q", len(recs), err, tc.want)
			}
		})
	}
}

func TestGhz(t *testing.T) {
	ks, err := Parse(read(t, "ghz.json"), "", Options{Source: "ghz run"})
	if err != nil {
		t.Fatal(err)
	}
	recs := pings(t, ks)
	valid(t, recs)
	r := recs[0]
	if r.Spec.Inflight != 16 || r.Spec.ConnMode != "pool" || r.Spec.ConnsRequested != 4 || r.Spec.Target != "127.0.0.1:50051" ||
		r.Spec.Call != "grpc.testing.BenchmarkService.UnaryCall" || r.Requests != 20000 || r.Errors["Unavailable"] != 100 ||
		r.ThroughputRPS != 9950 || r.DurationNS != 2e9 || r.Latency.P50NS != 1400000 || r.Latency.P90NS != 2500000 ||
		r.Latency.P99NS != 5000000 || r.Latency.MinNS != 200000 || r.Latency.P100NS != 9000000 || r.Source != "ghz run" ||
		r.StartedAt.Year() != 2026 || r.Env.HostCPUs != 2 {
		t.Errorf("got %+v", r)
	}
	// Two reports one after the other (ghz in a loop, >> one file): both,
	// in order.
	two := string(read(t, "ghz.json")) + "\n" + strings.Replace(string(read(t, "ghz.json")), `"concurrency":16`, `"concurrency":32`, 1)
	recs2, err := ParseGhz([]byte(two), Options{Source: "x"})
	if err != nil || len(recs2) != 2 || recs2[0].Spec.Inflight != 16 || recs2[1].Spec.Inflight != 32 {
		t.Errorf("two concatenated reports: got %d records, %v; want in-flight 16 then 32", len(recs2), err)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", `{"latencyDistribution": [`, "ghz JSON report 1"},
		{"no calls", `{"count":0,"total":0,"latencyDistribution":[]}`, "no calls to import"},
		{"no concurrency", `{"count":5,"total":100,"latencyDistribution":[]}`, "options.concurrency 0"},
		{"no percentiles", `{"count":5,"total":100,"options":{"concurrency":1},"statusCodeDistribution":{"OK":5},"latencyDistribution":[]}`, "lacks a P50 and P99"},
		{"more errors than requests", `{"count":5,"total":100,"options":{"concurrency":1},"statusCodeDistribution":{"Unavailable":50},"latencyDistribution":[]}`, "statusCodeDistribution Unavailable is 50 of 5 calls"},
		{"codes sum above count", `{"count":5,"total":100,"options":{"concurrency":1},"statusCodeDistribution":{"OK":3,"Unavailable":3},"latencyDistribution":[]}`, "counts more calls than count 5"},
		{"second report bad", string(read(t, "ghz.json")) + `{"count":0,"total":0,"latencyDistribution":[]}`, "ghz JSON report 2: count 0"},
		{"second report cut", string(read(t, "ghz.json")) + `{"count":5,`, "ghz JSON report 2"},
	} {
		if recs, err := ParseGhz([]byte(tc.data), Options{Source: "x"}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) || recs != nil {
			t.Errorf("%s: got %d records, %v; want ErrBadInput containing %q", tc.name, len(recs), err, tc.want)
		}
	}
}

func TestBenchmain(t *testing.T) {
	ks, err := Parse(read(t, "benchmain.txt"), "", Options{Source: "benchmain"})
	if err != nil {
		t.Fatal(err)
	}
	recs := pings(t, ks)
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
	const run = "Unary-benchTime_1s-maxConcurrentCalls_1:\n"
	for _, tc := range []struct{ name, data, want string }{
		{"unconstrained", "Unconstrained-benchTime_1s-maxConcurrentCalls_1:\n", "line 1: an Unconstrained benchmain run"},
		{"no benchTime", "Unary-maxConcurrentCalls_1-connections_1:\n50_Latency: 1µs\nNumber of requests: 5\n", "line 1: no benchTime"},
		{"no calls", "Unary-benchTime_1s-connections_1:\n", "line 1: no maxConcurrentCalls"},
		{"no latency", run + "Number of requests: 5\n", "line 1: benchmain run without latencies"},
		{"no run", "Number of requests: 5\n50_Latency: 1µs\n", "no benchmain run"},
		{"NaN P99", run + "50_Latency: 1µs\t90_Latency: 2µs\t99_Latency: NaNµs\t\nNumber of requests: 5\n", `line 2, column 33: 99_Latency "NaNµs" is not a latency`},
		{"infinite P50", run + "50_Latency: +Infms\t90_Latency: 2µs\t99_Latency: 3µs\t\nNumber of requests: 5\n", `line 2, column 1: 50_Latency "+Infms" is not a latency`},
		{"P99 missing", run + "50_Latency: 1µs\t90_Latency: 2µs\t\nNumber of requests: 5\n", "line 1: benchmain run's 50, 90 and 99_Latency out of order"},
		{"P90 below P50", run + "50_Latency: 5µs\t90_Latency: 2µs\t99_Latency: 9µs\t\nNumber of requests: 5\n", "out of order (5000, 2000, 9000 ns)"},
	} {
		if recs, err := ParseBenchmain([]byte(tc.data), Options{Source: "x"}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) || recs != nil {
			t.Errorf("%s: got %d records, %v; want ErrBadInput containing %q", tc.name, len(recs), err, tc.want)
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

// TestSchemaImportedFlowBulk: flow and bulk records may leave what their
// source does not say (host CPUs, sizes, checksum) at 0 or empty only
// when they carry a source; a measured one without it is refused.
func TestSchemaImportedFlowBulk(t *testing.T) {
	ks, err := Parse([]byte(gitalyHeader+"\nr,gitaly-grpc,on,1,1,1\n"), "", Options{Source: "issue"})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Parse([]byte(flowHeader+"\n0,1,1,1,1\n"), "", Options{Source: "post"})
	if err != nil {
		t.Fatal(err)
	}
	b, f := *ks[0].(*result.BulkRecord), *fs[0].(*result.FlowRecord)
	for _, tc := range []struct {
		name string
		rec  any
		ok   bool
	}{
		{"imported bulk", b, true},
		{"imported flow", f, true},
		{"measured bulk, no sizes", func() result.BulkRecord { c := b; c.Source = ""; return c }(), false},
		{"measured flow, no host CPUs", func() result.FlowRecord { c := f; c.Source = ""; return c }(), false},
		{"measured flow, host CPUs", func() result.FlowRecord { c := f; c.Source, c.Env.HostCPUs = "", 2; return c }(), true},
	} {
		j, err := json.Marshal(tc.rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := result.Validate(j); (err == nil) != tc.ok {
			t.Errorf("%s: got %v, want valid %v", tc.name, err, tc.ok)
		}
	}
}
