// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/server"
)

const unaryPath = "/grpc.testing.BenchmarkService/UnaryCall"

// grpcRequest is the request every tool sends, framed for h2load: gRPC's
// 5-byte prefix (not compressed, length 2) and the SimpleRequest every Go
// tool sends with payload 0, an empty Payload (field 3, length 0).
var grpcRequest = []byte{0, 0, 0, 0, 2, 0x1a, 0}

// lgConfig is the load-generator comparison's command line.
type lgConfig struct {
	rpclab, ghz, grpcClient, h2load, nghttp string
	protoDir                                string
	inflight                                []int
	layouts                                 []string
	seconds                                 int
	serverCPUs, clientCPUs                  string
	callgrind                               bool
	callgrindRPCs                           int
	repeats                                 int
	tools                                   []string
	work                                    string
}

// lgRow is one tool's figures in one cell.
type lgRow struct {
	tool     string
	requests int64
	rps      float64
	cpu      time.Duration
	srvCPU   time.Duration
	p50, p99 time.Duration // 0: not reported
	instr    int64         // callgrind Ir, 0 when not run under callgrind
	err      string
	note     string // said beside the figures (calls a tool cut at its end)
	// reps are the cell's runs of this tool, one per repeat in repeat
	// order (failed ones included), when there were more than one; the
	// row's own figures are then their medians (see summarize).
	reps []lgRow
}

func (r lgRow) cpuPerRPC() float64 {
	if r.requests == 0 {
		return math.NaN()
	}
	return float64(r.cpu.Microseconds()) / float64(r.requests)
}

func (r lgRow) instrPerRPC() float64 {
	if r.requests == 0 || r.instr == 0 {
		return math.NaN()
	}
	return float64(r.instr) / float64(r.requests)
}

// perRPC is the row's figure: CPU µs per RPC, or with callgrind
// instructions per RPC; for a row of repeats, the median of theirs.
func (r lgRow) perRPC(callgrind bool) float64 {
	if len(r.reps) > 0 {
		var v []float64
		for _, x := range r.reps {
			if x.err == "" {
				v = append(v, x.perRPC(callgrind))
			}
		}
		return medianOf(v)
	}
	if callgrind {
		return r.instrPerRPC()
	}
	return r.cpuPerRPC()
}

// ratioRange is the least and the most of base's figure over r's, repeat
// by repeat (each pair measured in the same repeat of the cell); for rows
// of one run, that run's ratio twice.
func ratioRange(base, r lgRow, callgrind bool) (lo, hi float64) {
	if len(base.reps) == 0 || len(r.reps) == 0 {
		x := base.perRPC(callgrind) / r.perRPC(callgrind)
		return x, x
	}
	lo, hi = math.NaN(), math.NaN()
	for i := 0; i < len(base.reps) && i < len(r.reps); i++ {
		b, x := base.reps[i], r.reps[i]
		if b.err != "" || x.err != "" {
			continue
		}
		q := b.perRPC(callgrind) / x.perRPC(callgrind)
		if math.IsNaN(lo) || q < lo {
			lo = q
		}
		if math.IsNaN(hi) || q > hi {
			hi = q
		}
	}
	return lo, hi
}

// summarize is one tool's row of a cell from its runs, one per repeat:
// the run itself when there was one; otherwise a row holding every run
// (reps) whose figures are the medians of the runs that succeeded, with
// the repeats that failed said in its note. It fails only if every run
// failed.
func summarize(tool string, runs []lgRow) lgRow {
	if len(runs) == 1 {
		return runs[0]
	}
	s := lgRow{tool: tool, reps: runs}
	var req, rps, srv, p50, p99 []float64
	var notes, errs []string
	for i, r := range runs {
		if r.err != "" {
			errs = append(errs, fmt.Sprintf("repeat %d: %s", i+1, r.err))
			continue
		}
		req = append(req, float64(r.requests))
		rps = append(rps, r.rps)
		srv = append(srv, float64(r.srvCPU))
		if r.p50 > 0 {
			p50 = append(p50, float64(r.p50))
		}
		if r.p99 > 0 {
			p99 = append(p99, float64(r.p99))
		}
		if r.note != "" && !contains(notes, r.note) {
			notes = append(notes, r.note)
		}
	}
	if len(req) == 0 {
		s.err = fmt.Sprintf("every one of %d repeats failed: %s", len(runs), strings.Join(errs, "; "))
		return s
	}
	s.requests, s.rps, s.srvCPU = int64(math.Round(medianOf(req))), medianOf(rps), time.Duration(medianOf(srv))
	if len(p50) > 0 {
		s.p50 = time.Duration(medianOf(p50))
	}
	if len(p99) > 0 {
		s.p99 = time.Duration(medianOf(p99))
	}
	if len(errs) > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d repeats failed (%s)", len(errs), len(runs), strings.Join(errs, "; ")))
	}
	s.note = strings.Join(notes, "; ")
	return s
}

// medianOf is the median of v (NaN when v is empty); v is sorted in place.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// rotated is the tools in the order repeat rep runs them: each repeat
// starts one tool later, so no tool always runs first (after the idle
// start) or right after the same neighbour.
func rotated(tools []string, rep int) []string {
	out := make([]string, 0, len(tools))
	for i := range tools {
		out = append(out, tools[(i+rep)%len(tools)])
	}
	return out
}

var allTools = []string{"rpclab", "ghz", "grpc-client", "h2load"}

func parseLoadgenFlags(args []string, stderr io.Writer) (*lgConfig, error) {
	fs := flag.NewFlagSet("peers loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &lgConfig{}
	fs.StringVar(&c.rpclab, "rpclab", "", "rpclab binary (serves, and drives as `rpclab sweep`)")
	fs.StringVar(&c.ghz, "ghz", "", "ghz binary")
	fs.StringVar(&c.grpcClient, "grpc-client", "", "grpc-go's benchmark/client binary")
	fs.StringVar(&c.h2load, "h2load", "", "h2load binary")
	fs.StringVar(&c.nghttp, "nghttp", "", "nghttp binary, to check once that h2load's request gets grpc-status 0 (optional)")
	fs.StringVar(&c.protoDir, "proto-dir", "", "rpclab's proto/ folder (for ghz)")
	inflight := fs.String("inflight", "1,8,32,64", "in-flight counts (comma-separated)")
	layouts := fs.String("layouts", "shared,per-worker", "connection layouts: shared (one connection), per-worker (one per in-flight RPC)")
	fs.IntVar(&c.seconds, "seconds", 10, "seconds per tool per cell (whole seconds: grpc-go's client takes no less)")
	fs.StringVar(&c.serverCPUs, "server-cpus", "1", "CPUs of the server (taskset list)")
	fs.StringVar(&c.clientCPUs, "client-cpus", "0", "CPUs of every client (taskset list)")
	fs.BoolVar(&c.callgrind, "callgrind", false, "run every tool under valgrind --tool=callgrind and report instructions per RPC")
	fs.IntVar(&c.repeats, "repeats", 1, "runs of every tool per cell, the tools in rotating order each repeat; the table gives the median and the range of the per-repeat ratios")
	fs.IntVar(&c.callgrindRPCs, "callgrind-rpcs", 20000, "with --callgrind: RPCs per run for the tools that take a count (ghz, h2load); the others run --seconds")
	tools := fs.String("tools", strings.Join(allTools, ","), "tools to run (comma-separated)")
	fs.StringVar(&c.work, "work", "", "folder for temporary files (default: a new one under $TMPDIR)")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	var err error
	if c.inflight, err = parseInts("--inflight", *inflight); err != nil {
		return nil, err
	}
	for _, l := range strings.Split(*layouts, ",") {
		if l != "shared" && l != "per-worker" {
			return nil, fmt.Errorf("%w: --layouts: unknown layout %q (want shared or per-worker)", errUsage, l)
		}
		c.layouts = append(c.layouts, l)
	}
	for _, t := range strings.Split(*tools, ",") {
		if !contains(allTools, t) {
			return nil, fmt.Errorf("%w: --tools: unknown tool %q (want some of %s)", errUsage, t, strings.Join(allTools, ","))
		}
		c.tools = append(c.tools, t)
	}
	if c.seconds < 1 {
		return nil, fmt.Errorf("%w: --seconds %d: want at least 1", errUsage, c.seconds)
	}
	if c.repeats < 1 {
		return nil, fmt.Errorf("%w: --repeats %d: want at least 1", errUsage, c.repeats)
	}
	if c.callgrindRPCs < 1 {
		return nil, fmt.Errorf("%w: --callgrind-rpcs %d: want at least 1", errUsage, c.callgrindRPCs)
	}
	if _, err := parseCPUList(c.serverCPUs); err != nil {
		return nil, fmt.Errorf("--server-cpus: %w", err)
	}
	if _, err := parseCPUList(c.clientCPUs); err != nil {
		return nil, fmt.Errorf("--client-cpus: %w", err)
	}
	if why := executable(c.rpclab); why != "" {
		return nil, fmt.Errorf("%w: --rpclab: %s (the server and the base of every ratio)", errUsage, why)
	}
	return c, nil
}

// startServe starts "rpclab serve" on a free loopback port, pinned to
// serverCPUs (checked by the flags' parser), for the runs that measure
// against rpclab's own server.
func startServe(ctx context.Context, rpclab, serverCPUs string) (*server.Process, error) {
	cpus, _ := parseCPUList(serverCPUs)
	srv, err := server.StartProcess(ctx, []string{rpclab, "serve", "--listen", "127.0.0.1:0"}, cpus, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("start the server: %w", err)
	}
	return srv, nil
}

func runLoadgen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseLoadgenFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.work == "" {
		if c.work, err = os.MkdirTemp("", "rpclab-peers-"); err != nil {
			return err
		}
		defer os.RemoveAll(c.work)
	}
	reqFile := filepath.Join(c.work, "unary.bin")
	if err := os.WriteFile(reqFile, grpcRequest, 0o644); err != nil {
		return err
	}
	srv, err := startServe(ctx, c.rpclab, c.serverCPUs)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()

	h2ok := ""
	if contains(c.tools, "h2load") && c.nghttp != "" && executable(c.nghttp) == "" {
		h2ok = checkH2Request(ctx, c, srv.Addr, reqFile)
	}

	what := "client CPU per RPC (user+sys of the whole client process, from wait4)"
	if c.callgrind {
		what = "instructions per RPC (valgrind --tool=callgrind, whole process)"
	}
	fmt.Fprintf(stdout, "load generators: unary, %s; server rpclab serve on CPUs %s, every client on CPUs %s, %d s per run%s\n",
		what, c.serverCPUs, c.clientCPUs, c.seconds, repeatsNote(c.repeats))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	printLGHeader(tw, c.callgrind)
	for _, layout := range c.layouts {
		for _, n := range c.inflight {
			runs := map[string][]lgRow{}
			for rep := range c.repeats {
				for _, t := range rotated(c.tools, rep) {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					s0, _ := procstat.CPUTime(srv.Pid)
					t0 := time.Now()
					var r lgRow
					if c.callgrind {
						r = callgrindDiff(ctx, c, t, srv.Addr, layout, n, reqFile, h2ok)
					} else {
						r = runTool(ctx, c, t, srv.Addr, layout, n, reqFile, h2ok, 1)
					}
					s1, _ := procstat.CPUTime(srv.Pid)
					fmt.Fprintf(stderr, "peers: loadgen %s inflight %d %s (repeat %d of %d): %.1f s wall\n",
						layout, n, t, rep+1, c.repeats, time.Since(t0).Seconds())
					r.srvCPU = s1 - s0
					runs[t] = append(runs[t], r)
				}
			}
			var rows []lgRow
			for _, t := range c.tools {
				rows = append(rows, summarize(t, runs[t]))
			}
			printLGRows(tw, c.callgrind, layout, n, rows)
		}
	}
	return tw.Flush()
}

// repeatsNote says how a cell's figures were taken when there were repeats.
func repeatsNote(repeats int) string {
	if repeats == 1 {
		return ""
	}
	return fmt.Sprintf("; %d repeats per cell, the tools in rotating order each repeat: each figure is the median of the repeats, each range the least and most of the per-repeat ratios", repeats)
}

func printLGHeader(w io.Writer, callgrind bool) {
	if callgrind {
		fmt.Fprintln(w, "layout\tinflight\ttool\trequests\tinstr/rpc\trpclab/x instr\tinstr range\tnote\t")
	} else {
		fmt.Fprintln(w, "layout\tinflight\ttool\trequests\treq/s\tcpu µs/rpc\tsrv µs/rpc\tp50\tp99\trpclab/x cpu\tcpu range\trpclab/x req/s\tnote\t")
	}
}

func printLGRows(w io.Writer, callgrind bool, layout string, n int, rows []lgRow) {
	var base *lgRow
	for i := range rows {
		if rows[i].tool == "rpclab" && rows[i].err == "" {
			base = &rows[i]
		}
	}
	ratios := func(r lgRow) (ratio, span string) {
		if base == nil {
			return "-", "-"
		}
		lo, hi := ratioRange(*base, r, callgrind)
		return fmt.Sprintf("%.2f", base.perRPC(callgrind)/r.perRPC(callgrind)), fmt.Sprintf("%.2f-%.2f", lo, hi)
	}
	for _, r := range rows {
		if r.err != "" {
			cols := 9
			if callgrind {
				cols = 4
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s%s\n", layout, n, r.tool, strings.Repeat("-\t", cols), "FAILED: "+r.err+"\t")
			continue
		}
		ratio, span := ratios(r)
		if callgrind {
			fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%.0f\t%s\t%s\t%s\t\n", layout, n, r.tool, r.requests, r.perRPC(true), ratio, span, r.note)
			continue
		}
		rr := "-"
		if base != nil {
			rr = fmt.Sprintf("%.2f", base.rps/r.rps)
		}
		srv := "-"
		if r.requests > 0 {
			srv = fmt.Sprintf("%.1f", float64(r.srvCPU.Microseconds())/float64(r.requests))
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			layout, n, r.tool, r.requests, r.rps, r.perRPC(false), srv, dur(r.p50), dur(r.p99), ratio, span, rr, r.note)
	}
	fmt.Fprintln(w, strings.Repeat("\t", 13))
}

func dur(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Microsecond / 10).String()
}

// conns is the connection count of a layout at n in flight.
func conns(layout string, n int) int {
	if layout == "per-worker" {
		return n
	}
	return 1
}

// callgrindDiff runs the tool under callgrind twice, the second run twice as
// long (or twice the RPCs), and returns the difference: start-up and
// shut-down cancel out, leaving instructions per RPC of the steady state.
func callgrindDiff(ctx context.Context, c *lgConfig, tool, addr, layout string, n int, reqFile, h2fail string) lgRow {
	r1 := runTool(ctx, c, tool, addr, layout, n, reqFile, h2fail, 1)
	if r1.err != "" {
		return r1
	}
	r2 := runTool(ctx, c, tool, addr, layout, n, reqFile, h2fail, 2)
	if r2.err != "" {
		return r2
	}
	d := lgRow{tool: tool, requests: r2.requests - r1.requests, instr: r2.instr - r1.instr}
	if d.requests <= 0 || d.instr <= 0 {
		d.err = fmt.Sprintf("callgrind: the longer run did not do more (%d then %d RPCs, %d then %d instructions): raise --seconds or --callgrind-rpcs",
			r1.requests, r2.requests, r1.instr, r2.instr)
	}
	d.note = fmt.Sprintf("difference of runs of %d and %d RPCs", r1.requests, r2.requests)
	return d
}

func runTool(ctx context.Context, c *lgConfig, tool, addr, layout string, n int, reqFile, h2fail string, scale int) lgRow {
	r := lgRow{tool: tool}
	var path string
	switch tool {
	case "rpclab":
		path = c.rpclab
	case "ghz":
		path = c.ghz
	case "grpc-client":
		path = c.grpcClient
	case "h2load":
		path = c.h2load
	}
	if why := executable(path); why != "" {
		r.err = why
		return r
	}
	if tool == "h2load" && h2fail != "" {
		r.err = h2fail
		return r
	}
	secs := strconv.Itoa(c.seconds * scale)
	rpcs := c.callgrindRPCs * scale
	_, port, _ := strings.Cut(addr, ":")
	var argv []string
	out := filepath.Join(c.work, tool+".out")
	testName := fmt.Sprintf("rpclab-peers-%d", os.Getpid())
	switch tool {
	case "rpclab":
		argv = []string{path, "sweep", "--target", addr, "--conn", layout, "--inflight", strconv.Itoa(n),
			"--warmup", "0s", "--interval", secs + "s", "-o", out, "--no-pin"}
		_ = os.Remove(out)
	case "ghz":
		argv = []string{path, "--insecure", "--proto", filepath.Join(c.protoDir, "grpc/testing/benchmark_service.proto"),
			"--import-paths", c.protoDir, "--call", "grpc.testing.BenchmarkService.UnaryCall", "-d", `{"payload":{}}`,
			"-c", strconv.Itoa(n), "--connections", strconv.Itoa(conns(layout, n)), "--format", "json"}
		if c.callgrind {
			argv = append(argv, "-n", strconv.Itoa(rpcs))
		} else {
			argv = append(argv, "-z", secs+"s")
		}
		argv = append(argv, addr)
	case "grpc-client":
		r, cn := n, 1
		if layout == "per-worker" {
			r, cn = 1, n
		}
		argv = []string{path, "-test_name", testName, "-port", port, "-r", strconv.Itoa(r), "-c", strconv.Itoa(cn),
			"-w", "0", "-d", secs, "-req", "0", "-resp", "0"}
	case "h2load":
		cn, m := 1, n
		if layout == "per-worker" {
			cn, m = n, 1
		}
		argv = []string{path, "-c", strconv.Itoa(cn), "-m", strconv.Itoa(m), "-d", reqFile,
			"-H", "content-type: application/grpc", "-H", "te: trailers"}
		if c.callgrind {
			argv = append(argv, "-n", strconv.Itoa(max(rpcs, cn)))
		} else {
			argv = append(argv, "-D", secs)
		}
		argv = append(argv, "http://"+addr+unaryPath)
	}
	cgOut := filepath.Join(c.work, "callgrind."+tool)
	if c.callgrind {
		// Go's asynchronous preemption signals trip callgrind 3.19's signal
		// bookkeeping (an assertion in threads.c); without them Go runs.
		argv = append([]string{"env", "GODEBUG=asyncpreemptoff=1", "valgrind", "--tool=callgrind", "--callgrind-out-file=" + cgOut}, argv...)
	}
	o, err := runPinned(ctx, c.clientCPUs, argv...)
	if tool == "grpc-client" {
		_ = os.Remove("/tmp/" + testName + ".cpu")
		_ = os.Remove("/tmp/" + testName + ".mem")
	}
	if err != nil {
		r.err = err.Error()
		if i := strings.Index(o.stderr, "Assertion"); c.callgrind && i >= 0 {
			line, _, _ := strings.Cut(o.stderr[i:], "\n")
			r.err = "valgrind failed: " + line
			if tool == "grpc-client" {
				r.err += " (grpc-go's client profiles itself with SIGPROF all along)"
			}
		}
		return r
	}
	r.cpu = o.cpu
	switch tool {
	case "rpclab":
		err = parseRPCLab(out, &r)
	case "ghz":
		err = parseGHZ([]byte(o.stdout), &r)
	case "grpc-client":
		err = parseGRPCClient(o.stdout, c.seconds*scale, &r)
	case "h2load":
		err = parseH2load(o.stdout, &r)
	}
	if err == nil && c.callgrind {
		r.instr, err = parseCallgrind(cgOut)
	}
	if err != nil {
		r.err = err.Error()
	}
	return r
}

// checkH2Request sends h2load's request once with nghttp and returns why
// it is not a successful gRPC call ("" when it is): h2load counts any HTTP
// 200 as success, and gRPC puts its status in the trailers.
func checkH2Request(ctx context.Context, c *lgConfig, addr, reqFile string) string {
	o, err := runPinned(ctx, c.clientCPUs, c.nghttp, "-v", "-d", reqFile,
		"-H", "content-type: application/grpc", "-H", "te: trailers", "http://"+addr+unaryPath)
	if err != nil {
		return "request check with nghttp failed: " + err.Error()
	}
	if !strings.Contains(o.stdout, "grpc-status: 0") {
		return "request check: the server did not answer grpc-status 0: " + tail(o.stdout, 200)
	}
	return ""
}

func parseRPCLab(path string, r *lgRow) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("rpclab: no record: %w", err)
	}
	var rec struct {
		Status        string  `json:"status"`
		Error         string  `json:"error"`
		Requests      int64   `json:"requests"`
		ThroughputRPS float64 `json:"throughput_rps"`
		Errors        map[string]int64
		Latency       struct {
			P50 int64 `json:"p50_ns"`
			P99 int64 `json:"p99_ns"`
		} `json:"latency"`
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		return fmt.Errorf("rpclab: record: %w", err)
	}
	if rec.Status != "ok" {
		return fmt.Errorf("rpclab: status %s: %s", rec.Status, rec.Error)
	}
	r.requests, r.rps = rec.Requests, rec.ThroughputRPS
	r.p50, r.p99 = time.Duration(rec.Latency.P50), time.Duration(rec.Latency.P99)
	return nil
}

func parseGHZ(b []byte, r *lgRow) error {
	var rep struct {
		Count   int64   `json:"count"`
		RPS     float64 `json:"rps"`
		Latency []struct {
			Percentage int   `json:"percentage"`
			Latency    int64 `json:"latency"`
		} `json:"latencyDistribution"`
		Errors map[string]int64 `json:"errorDistribution"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("ghz: report: %w", err)
	}
	if rep.Count == 0 {
		return errors.New("ghz: no request counted")
	}
	// ghz stops a -z run by closing its connections under the calls in
	// flight, which then fail "transport is closing" or "canceled": those
	// are its way of stopping, noted, not failures of the run.
	var nerr, cut int64
	for msg, n := range rep.Errors {
		if strings.Contains(msg, "transport is closing") || strings.Contains(msg, "context canceled") || strings.Contains(msg, "code = Canceled") {
			cut += n
			continue
		}
		nerr += n
	}
	if nerr > 0 {
		return fmt.Errorf("ghz: %d of %d requests failed: %v", nerr, rep.Count, rep.Errors)
	}
	if cut > 0 {
		r.note = fmt.Sprintf("%d calls cut by ghz's stop", cut)
	}
	r.requests, r.rps = rep.Count, rep.RPS
	for _, l := range rep.Latency {
		switch l.Percentage {
		case 50:
			r.p50 = time.Duration(l.Latency)
		case 99:
			r.p99 = time.Duration(l.Latency)
		}
	}
	return nil
}

// parseGRPCClient reads grpc-go's benchmark client: "qps: X" (calls over
// -d seconds) and "Latency: (50/90/99 %ile): a/b/c".
func parseGRPCClient(out string, seconds int, r *lgRow) error {
	sc := bufio.NewScanner(strings.NewReader(out))
	seen := false
	for sc.Scan() {
		l := sc.Text()
		if v, ok := strings.CutPrefix(l, "qps: "); ok {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return fmt.Errorf("grpc-client: qps %q: %w", v, err)
			}
			r.rps = q
			r.requests = int64(math.Round(q * float64(seconds)))
			seen = true
		}
		if v, ok := strings.CutPrefix(l, "Latency: (50/90/99 %ile): "); ok {
			p := strings.Split(strings.TrimSpace(v), "/")
			if len(p) != 3 {
				return fmt.Errorf("grpc-client: latency line %q", l)
			}
			var err error
			if r.p50, err = time.ParseDuration(p[0]); err != nil {
				return fmt.Errorf("grpc-client: p50 %q: %w", p[0], err)
			}
			if r.p99, err = time.ParseDuration(p[2]); err != nil {
				return fmt.Errorf("grpc-client: p99 %q: %w", p[2], err)
			}
		}
	}
	if !seen || r.requests == 0 {
		return fmt.Errorf("grpc-client: no qps in its output: %s", tail(out, 200))
	}
	return nil
}

// parseH2load reads "finished in 1.00s, 123.45 req/s, ..." and "requests: N
// total, N started, N done, N succeeded, N failed, ...".
func parseH2load(out string, r *lgRow) error {
	var okN, failed, errored int64 = -1, 0, 0
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(l, "finished in "); ok {
			f := strings.Split(v, ", ")
			if len(f) >= 2 {
				q, err := strconv.ParseFloat(strings.TrimSuffix(f[1], " req/s"), 64)
				if err != nil {
					return fmt.Errorf("h2load: rate %q: %w", f[1], err)
				}
				r.rps = q
			}
		}
		if v, ok := strings.CutPrefix(l, "requests: "); ok {
			for _, part := range strings.Split(v, ", ") {
				num, name, _ := strings.Cut(part, " ")
				n, err := strconv.ParseInt(num, 10, 64)
				if err != nil {
					return fmt.Errorf("h2load: requests line %q", l)
				}
				switch name {
				case "succeeded":
					okN = n
				case "failed":
					failed = n
				case "errored":
					errored = n
				}
			}
		}
	}
	if okN <= 0 {
		return fmt.Errorf("h2load: no succeeded request in its output: %s", tail(out, 200))
	}
	if failed+errored > 0 {
		return fmt.Errorf("h2load: %d failed, %d errored of %d", failed, errored, okN+failed)
	}
	r.requests = okN
	return nil
}

// parseCallgrind returns the total instruction count of a callgrind output
// file (its "summary:" or "totals:" line).
func parseCallgrind(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("callgrind: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		for _, p := range []string{"summary: ", "totals: "} {
			if v, ok := strings.CutPrefix(l, p); ok {
				f := strings.Fields(v)
				if len(f) == 0 {
					continue
				}
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("callgrind: no summary line in %s", path)
}

func parseInts(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: %s: %q is not a count of at least 1", errUsage, flagName, f)
		}
		out = append(out, n)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
