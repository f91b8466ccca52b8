// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/proto/ydbpb"
)

// ydbCSVHeader is the header of YDB's "CSV Results:" block, byte for byte.
const ydbCSVHeader = "inflight,throughput,p50,p90,p99,p99_9,p100"

// ydbSummaryHeader is the header line of YDB's "Benchmark Results Summary:".
var ydbSummaryHeader = regexp.MustCompile(`^\s*Inflight \| +Throughput \(req/s\) \| +P50 \(us\) \| +P90 \(us\) \| +P99 \(us\) \| +P99\.9 \(us\) \| +P100 \(us\)$`)

// ydbSummaryRow is a row of that table: in-flight, throughput, five latencies.
var ydbSummaryRow = regexp.MustCompile(`^\s*(\d+) \| +(\d+\.\d\d) \| +(\d+) \| +(\d+) \| +(\d+) \| +(\d+) \| +(\d+)$`)

// ydbRow is one step as YDB's tables print it.
type ydbRow struct {
	inflight   int
	throughput float64
	lat        [5]int64 // p50, p90, p99, p99.9, p100 in µs
}

func parseYDBRow(t *testing.T, fields []string) ydbRow {
	t.Helper()
	if len(fields) != 7 {
		t.Fatalf("row %q: got %d fields, want 7", fields, len(fields))
	}
	var r ydbRow
	var err error
	if r.inflight, err = strconv.Atoi(fields[0]); err != nil {
		t.Fatalf("row %q: in-flight: %v", fields, err)
	}
	if r.throughput, err = strconv.ParseFloat(fields[1], 64); err != nil {
		t.Fatalf("row %q: throughput: %v", fields, err)
	}
	for i := range r.lat {
		if r.lat[i], err = strconv.ParseInt(fields[2+i], 10, 64); err != nil {
			t.Fatalf("row %q: latency %d: %v", fields, i, err)
		}
	}
	return r
}

// parseYDBOutput reads YDB's two tables from the client's stdout: the
// summary (its header and separator as YDB prints them) and the CSV (its
// header exact). Both must hold the same rows.
func parseYDBOutput(t *testing.T, stdout string) []ydbRow {
	t.Helper()
	lines := strings.Split(stdout, "\n")
	at := func(title string) int {
		for i, l := range lines {
			if l == title {
				return i
			}
		}
		t.Fatalf("no %q line in stdout:\n%s", title, stdout)
		return 0
	}
	s := at("Benchmark Results Summary:")
	if s+2 >= len(lines) || !ydbSummaryHeader.MatchString(lines[s+1]) {
		t.Fatalf("summary header: got %q, want YDB's column names; stdout:\n%s", lines[s+1], stdout)
	}
	if sep := lines[s+2]; strings.Trim(sep, "-+") != "" || strings.Count(sep, "-+-") != 6 || len(sep) != len(lines[s+1]) {
		t.Errorf("summary separator %q does not underline the header %q", sep, lines[s+1])
	}
	var table []ydbRow
	for _, l := range lines[s+3:] {
		if l == "" {
			break
		}
		m := ydbSummaryRow.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("summary row %q is not YDB's format", l)
		}
		if len(l) != len(lines[s+1]) {
			t.Errorf("summary row %q is not aligned with the header %q", l, lines[s+1])
		}
		table = append(table, parseYDBRow(t, m[1:]))
	}
	c := at("CSV Results:")
	if c+1 >= len(lines) || lines[c+1] != ydbCSVHeader {
		t.Fatalf("CSV header: got %q, want %q", lines[c+1], ydbCSVHeader)
	}
	var csv []ydbRow
	for _, l := range lines[c+2:] {
		if l == "" {
			break
		}
		csv = append(csv, parseYDBRow(t, strings.Split(l, ",")))
	}
	if len(csv) != len(table) {
		t.Fatalf("the CSV has %d rows, the summary %d", len(csv), len(table))
	}
	for i := range csv {
		if csv[i] != table[i] {
			t.Errorf("row %d: CSV %+v, summary %+v: want the same step", i, csv[i], table[i])
		}
	}
	return table
}

// runYDB runs rpclab-ydb-ping with args (YDB's command line) and returns its
// stdout, stderr and exit code.
func runYDB(t *testing.T, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", "cpp", "rpclab-ydb-ping"), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("rpclab-ydb-ping %v did not finish within %v; stderr:\n%s", args, timeout, e.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("rpclab-ydb-ping %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// TestCppYDBBlogCommands runs the four commands of YDB's post (single
// connection and multi connection (--local-pool), unary and streaming)
// verbatim, at a short interval and in-flight 1..4, against rpclab serve
// and against the C++ server, both answering Ydb.Debug.V1.DebugService.
// Both of YDB's tables must parse with every step's throughput above zero,
// and the records written beside them (--out) must show what the kernel
// saw: one connection for every in-flight without --local-pool (C-core
// shares the subchannel of channels with identical arguments), one per
// channel with it. YDB mode's --async and --async-callback run once each.
func TestCppYDBBlogCommands(t *testing.T) {
	selected(t, "cpp")
	build(t, "cpp")
	servers := []struct {
		name string
		argv []string
	}{
		{"go", []string{rpclabBin, "serve", "--listen", "127.0.0.1:0"}},
		{"cpp", []string{rpclabBin, "serve", "--impl", "cpp", "--clients-dir", "..", "--listen", "127.0.0.1:0"}},
	}
	commands := []struct {
		name  string
		extra []string
		multi bool // a connection per channel
	}{
		{"single connection, unary", nil, false},
		{"multi connection, unary", []string{"--local-pool"}, true},
		{"single connection, streaming", []string{"--streaming"}, false},
		{"multi connection, streaming", []string{"--streaming", "--local-pool"}, true},
		{"async", []string{"--async", "--local-pool"}, true},
		{"callback", []string{"--async-callback"}, false},
	}
	for _, srv := range servers {
		t.Run("server="+srv.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			p, err := server.StartProcess(ctx, srv.argv, nil, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.Stop() }()
			for _, c := range commands {
				t.Run(c.name, func(t *testing.T) {
					maxInflight := 4
					if c.name == "async" || c.name == "callback" {
						maxInflight = 2
					}
					out := filepath.Join(t.TempDir(), "r.jsonl")
					args := append([]string{"--host", p.Addr, "--min-inflight", "1", "--max-inflight", strconv.Itoa(maxInflight),
						"--warmup", "1", "--interval", "1", "--with-csv"}, c.extra...)
					stdout, stderr, code := runYDB(t, 2*time.Minute, append(args, "--out", out)...)
					if code != 0 {
						t.Fatalf("rpclab-ydb-ping %s: exit code %d; stderr:\n%s\nstdout:\n%s", strings.Join(args, " "), code, stderr, stdout)
					}
					rows := parseYDBOutput(t, stdout)
					if len(rows) != maxInflight {
						t.Fatalf("got %d rows, want %d (in-flight 1..%d)", len(rows), maxInflight, maxInflight)
					}
					for i, r := range rows {
						if r.inflight != i+1 {
							t.Errorf("row %d: in-flight %d, want %d", i, r.inflight, i+1)
						}
						if r.throughput <= 0 {
							t.Errorf("in-flight %d: throughput %v, want > 0", r.inflight, r.throughput)
						}
						for j := 1; j < len(r.lat); j++ {
							if r.lat[j] < r.lat[j-1] {
								t.Errorf("in-flight %d: latencies %v are not in increasing order", r.inflight, r.lat)
							}
						}
					}
					recs, err := result.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					if len(recs) != len(rows) {
						t.Fatalf("got %d records, want %d", len(recs), len(rows))
					}
					for i, rec := range recs {
						n := rec.Spec.Inflight
						if rec.Status != result.StatusOK || n != rows[i].inflight {
							t.Errorf("record %d: status %q, in-flight %d; want ok, %d: %s", i, rec.Status, n, rows[i].inflight, rec.Error)
						}
						wantRPC := "unary"
						if slices.Contains(c.extra, "--streaming") {
							wantRPC = "streaming"
						}
						if string(rec.Spec.RPC) != wantRPC {
							t.Errorf("record %d: rpc %q, want %q", i, rec.Spec.RPC, wantRPC)
						}
						if rec.Spec.Service != "ydb-debug" {
							t.Errorf("record %d: service %q, want ydb-debug (YDB mode pings DebugService)", i, rec.Spec.Service)
						}
						if rec.Spec.ConnsRequested != n {
							t.Errorf("in-flight %d: conns_requested %d, want %d (a channel per in-flight)", n, rec.Spec.ConnsRequested, n)
						}
						want := 1
						if c.multi {
							want = n
						}
						if rec.ConnsObserved != want {
							t.Errorf("in-flight %d: the OS saw %d connections, want %d", n, rec.ConnsObserved, want)
						}
						// The table prints two decimals, the record three.
						if got := rows[i].throughput; math.Abs(got-rec.ThroughputRPS) > 0.0051 {
							t.Errorf("in-flight %d: table throughput %v, record %v: want the same figure", n, got, rec.ThroughputRPS)
						}
					}
				})
			}
		})
	}
}

// TestCppYDBBadInput: YDB's command line with a bad port, an empty range
// or an unknown flag exits 2 naming the flag, prints no table and writes no
// record file.
func TestCppYDBBadInput(t *testing.T) {
	selected(t, "cpp")
	build(t, "cpp")
	cases := []struct {
		args []string
		flag string
	}{
		{[]string{"--host", "127.0.0.1:99999", "--inflight", "1"}, "--host"},
		{[]string{"--host", "127.0.0.1:http"}, "--host"},
		{[]string{"--host", "127.0.0.1:2137", "--min-inflight", "9", "--max-inflight", "2"}, "--max-inflight"},
		{[]string{"--host", "127.0.0.1:2137", "--with-csv", "--bogus"}, "--bogus"},
		{[]string{"--host", "127.0.0.1:2137", "--interval", "ten"}, "--interval"},
		{[]string{"--host", "127.0.0.1:2137", "--async", "--streaming"}, "--streaming"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.jsonl")
			stdout, stderr, code := runYDB(t, time.Minute, append(c.args, "--out", out)...)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if !strings.Contains(stderr, c.flag+":") {
				t.Errorf("stderr %q does not name %s", stderr, c.flag)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("--out %s: %v, want no file", out, err)
			}
		})
	}
}

// TestCppServerYDB talks to the C++ server with grpc-go's YDB client: the
// unary ping and every ping of a stream are answered with the server's time
// in CallBackTs (µs since the epoch, the same host's clock), one reply per
// request, and a half-closed stream ends with OK.
func TestCppServerYDB(t *testing.T) {
	selected(t, "cpp")
	build(t, "cpp")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, cc := cppServerConn(t, ctx, "--num-cqs", "1", "--callbacks-per-cq", "1")
	c := ydbpb.NewDebugServiceClient(cc)
	inWindow := func(what string, ts uint64, before, after time.Time) {
		t.Helper()
		if ts < uint64(before.UnixMicro()) || ts > uint64(after.UnixMicro()) {
			t.Errorf("%s: CallBackTs = %d, want the server's time in µs, within [%d, %d]", what, ts, before.UnixMicro(), after.UnixMicro())
		}
	}
	for i := 0; i < 3; i++ {
		before := time.Now()
		resp, err := c.PingPlainGrpc(ctx, &ydbpb.PlainGrpcRequest{})
		if err != nil {
			t.Fatalf("PingPlainGrpc: %v", err)
		}
		inWindow("PingPlainGrpc", resp.GetCallBackTs(), before, time.Now())
	}
	// Two streams at once with one handler posted: the second is served too.
	for s := 0; s < 2; s++ {
		stream, err := c.PingStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			before := time.Now()
			if err := stream.Send(&ydbpb.PlainGrpcRequest{}); err != nil {
				t.Fatalf("stream %d send %d: %v", s, i, err)
			}
			resp, err := stream.Recv()
			if err != nil {
				t.Fatalf("stream %d recv %d: %v", s, i, err)
			}
			inWindow("PingStream", resp.GetCallBackTs(), before, time.Now())
		}
		if s == 1 {
			if err := stream.CloseSend(); err != nil {
				t.Fatal(err)
			}
			if resp, err := stream.Recv(); !errors.Is(err, io.EOF) {
				t.Errorf("after CloseSend: got (%v, %v), want io.EOF", resp, err)
			}
		}
	}
}

// TestCppYDBInterrupted: SIGINT in YDB mode's second step ends the client
// with exit 1, and nothing measured is lost: both tables hold the finished
// step and the cut one, whose record says interrupted.
func TestCppYDBInterrupted(t *testing.T) {
	selected(t, "cpp")
	build(t, "cpp")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, pings := servePing(t, lis)
	defer srv.Stop()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	cmd := exec.CommandContext(ctx, filepath.Join("..", "cpp", "rpclab-ydb-ping"), "--host", lis.Addr().String(),
		"--min-inflight", "1", "--max-inflight", "3", "--warmup", "0", "--interval", "3", "--with-csv", "--out", out)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	// The first step's record is written as it ends; the pings the server
	// answers after that are the second step's (no warm-up): once it has
	// answered 50 of them, the second step is inside its 3 s interval with
	// RPCs measured. Events, not a fixed wait a busy machine could outlast.
	var first int64
	for {
		if b, _ := os.ReadFile(out); bytes.Count(b, []byte("\n")) >= 1 {
			if first == 0 {
				first = pings.Load()
			}
			if pings.Load() >= first+50 {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the first step's record and 50 pings of the second: not before the test's deadline (%d pings); stderr:\n%s", pings.Load(), e.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: got %v, want code 1 (interrupted); stderr:\n%s", err, e.String())
	}
	rows := parseYDBOutput(t, o.String())
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(recs) != 2 {
		t.Fatalf("got %d rows and %d records, want 2 of each (the finished step and the cut one); stdout:\n%s", len(rows), len(recs), o.String())
	}
	if recs[0].Status != result.StatusOK || recs[1].Status != result.StatusInterrupted {
		t.Errorf("statuses %q, %q; want ok, interrupted", recs[0].Status, recs[1].Status)
	}
	if rows[1].inflight != 2 || rows[1].throughput <= 0 {
		t.Errorf("the cut step's row %+v: want in-flight 2 with its throughput", rows[1])
	}
	if !strings.Contains(e.String(), "in-flight 2 row is from an interrupted interval") {
		t.Errorf("stderr does not say the in-flight 2 row was cut short:\n%s", e.String())
	}
}

// TestCppYDBHosts: with --host A,B the step's channels go to the hosts
// round-robin, so both servers answer pings, and with --local-pool the OS
// sees a connection per channel across them (the connection YDB mode
// opens first, to print TCP_NODELAY as YDB's client does, is gone).
func TestCppYDBHosts(t *testing.T) {
	selected(t, "cpp")
	build(t, "cpp")
	var addrs []string
	var counts []*atomic.Int64
	for i := 0; i < 2; i++ {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv, n := servePing(t, lis)
		defer srv.Stop()
		addrs = append(addrs, lis.Addr().String())
		counts = append(counts, n)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	stdout, stderr, code := runYDB(t, time.Minute, "--host", strings.Join(addrs, ","), "--inflight", "4", "--local-pool",
		"--warmup", "0.2", "--interval", "0.5", "--out", out)
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	if rows := parseYDBSummaryOnly(t, stdout); rows != 1 {
		t.Errorf("got %d summary rows, want 1", rows)
	}
	// YDB's client prints TCP_NODELAY of its first connection first.
	if want := "TCP_NODELAY is ENABLED (Nagle OFF)\n\nRunning benchmark with 4 concurrent requests"; !strings.HasPrefix(stdout, want) {
		t.Errorf("stdout starts %.80q, want %q", stdout, want)
	}
	for i, n := range counts {
		if n.Load() == 0 {
			t.Errorf("server %d (%s) got no pings: the channels did not go round-robin over the hosts", i, addrs[i])
		}
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].ConnsObserved != 4 || recs[0].Spec.Target != strings.Join(addrs, ",") {
		t.Errorf("records %+v: want one, target %q, 4 connections seen", recs, strings.Join(addrs, ","))
	}
}

// parseYDBSummaryOnly counts the rows of the summary table when the run had
// no --with-csv (and so must print no CSV).
func parseYDBSummaryOnly(t *testing.T, stdout string) int {
	t.Helper()
	if strings.Contains(stdout, "CSV Results:") {
		t.Errorf("CSV printed without --with-csv:\n%s", stdout)
	}
	rows := 0
	for _, l := range strings.Split(stdout[strings.Index(stdout, "Benchmark Results Summary:")+1:], "\n") {
		if ydbSummaryRow.MatchString(l) {
			rows++
		}
	}
	return rows
}

// TestSweepYDBDebugCppServer: rpclab sweep --service ydb-debug, with the
// C++ server as its child, pings YDB's DebugService unary and streaming:
// every step ok with spec.service ydb-debug, each carrying the server's CPU
// over its interval (the C++ server answers rpclab.v1.UsageService, whatever
// service the pings go to).
func TestSweepYDBDebugCppServer(t *testing.T) {
	selected(t, "cpp")
	build(t, "cpp")
	recs := sweep(t, 3*time.Minute, 8, "--service", "ydb-debug", "--server", "cpp", "--clients-dir", ".",
		"--rpc", "unary,streaming", "--inflight", "1,4", "--conn", "shared,per-worker", "--warmup", "200ms", "--interval", "1s")
	for _, r := range recs {
		if r.Status != result.StatusOK || r.Requests == 0 || r.Spec.Service != "ydb-debug" || r.Spec.Server != "cpp" {
			t.Errorf("%s %s inflight=%d: status %q (%s), %d requests, service %q, server %q; want ok, ydb-debug, cpp",
				r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, r.Status, r.Error, r.Requests, r.Spec.Service, r.Spec.Server)
		}
		if sc := r.ServerCPU; sc == nil || sc.CPUNS <= 0 || sc.CPUs < 1 || sc.Busy <= 0 {
			t.Errorf("%s %s inflight=%d: server_cpu %+v, want the C++ server's CPU over the interval", r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, r.ServerCPU)
		}
	}
}
