// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/bench/peers/internal/cli"
	"github.com/rpclab/rpclab/internal/procstat"
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
		return nil, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	var err error
	if c.inflight, err = cli.ParseInts("--inflight", *inflight); err != nil {
		return nil, err
	}
	for _, l := range strings.Split(*layouts, ",") {
		if l != "shared" && l != "per-worker" {
			return nil, fmt.Errorf("%w: --layouts: unknown layout %q (want shared or per-worker)", cli.ErrUsage, l)
		}
		c.layouts = append(c.layouts, l)
	}
	for _, t := range strings.Split(*tools, ",") {
		if !contains(allTools, t) {
			return nil, fmt.Errorf("%w: --tools: unknown tool %q (want some of %s)", cli.ErrUsage, t, strings.Join(allTools, ","))
		}
		c.tools = append(c.tools, t)
	}
	if c.seconds < 1 {
		return nil, fmt.Errorf("%w: --seconds %d: want at least 1", cli.ErrUsage, c.seconds)
	}
	if c.repeats < 1 {
		return nil, fmt.Errorf("%w: --repeats %d: want at least 1", cli.ErrUsage, c.repeats)
	}
	if c.callgrindRPCs < 1 {
		return nil, fmt.Errorf("%w: --callgrind-rpcs %d: want at least 1", cli.ErrUsage, c.callgrindRPCs)
	}
	if _, err := cli.ParseCPUList(c.serverCPUs); err != nil {
		return nil, fmt.Errorf("--server-cpus: %w", err)
	}
	if _, err := cli.ParseCPUList(c.clientCPUs); err != nil {
		return nil, fmt.Errorf("--client-cpus: %w", err)
	}
	if why := cli.Executable(c.rpclab); why != "" {
		return nil, fmt.Errorf("%w: --rpclab: %s (the server and the base of every ratio)", cli.ErrUsage, why)
	}
	return c, nil
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
	srv, err := cli.StartServe(ctx, c.rpclab, c.serverCPUs)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()

	h2ok := ""
	if contains(c.tools, "h2load") && c.nghttp != "" && cli.Executable(c.nghttp) == "" {
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
				for _, t := range cli.Rotated(c.tools, rep) {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
