// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/server"
	"github.com/rpclab/rpclab/stats"
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

// medianOf is stats.Median of v, or NaN when v is empty (a figure no run
// gave, printed as NaN in the table).
func medianOf(v []float64) float64 {
	if m, ok := stats.Median(v); ok {
		return m
	}
	return math.NaN()
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
