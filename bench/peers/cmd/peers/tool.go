// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/bench/peers/internal/cli"
)

// tool is one load generator of the comparison: the command that runs it
// for one cell, and the parser that reads its figures. Each lives in its
// own file (tool_<name>.go).
type tool interface {
	// binary is the tool's executable, from the flags ("" when not given).
	binary() string
	// command is the tool's argv (binary first) for run.
	command(run toolRun) []string
	// parse reads run's figures into r from the tool's stdout or the files
	// it wrote.
	parse(run toolRun, stdout string, r *lgRow) error
}

// A tool that is a cleaner leaves files behind and removes them after
// every run, failed or not.
type cleaner interface {
	cleanup()
}

// A tool that is a refuser may refuse to run for a reason found before
// the runs ("" when it runs).
type refuser interface {
	refused() string
}

// A tool that is a valgrindHinter says why valgrind may fail on it.
type valgrindHinter interface {
	valgrindHint() string
}

// toolRun is one run of a tool: a cell (layout, in-flight count) against
// the server at addr, for seconds (or, under callgrind, rpcs RPCs for the
// tools that take a count).
type toolRun struct {
	addr      string
	layout    string
	n         int
	seconds   int
	rpcs      int
	callgrind bool
	// out is a file the tool may write its results to.
	out string
}

// secs is the run's length in whole seconds, as the tools' flags take it.
func (run toolRun) secs() string { return strconv.Itoa(run.seconds) }

// toolNamed is the tool of the given --tools name, configured from c;
// h2fail is why h2load's request is not a successful call ("" when it is).
func toolNamed(name string, c *lgConfig, reqFile, h2fail string) tool {
	switch name {
	case "rpclab":
		return rpclabTool{bin: c.rpclab}
	case "ghz":
		return ghzTool{bin: c.ghz, protoDir: c.protoDir}
	case "grpc-client":
		return grpcClientTool{bin: c.grpcClient, testName: fmt.Sprintf("rpclab-peers-%d", os.Getpid())}
	case "h2load":
		return h2loadTool{bin: c.h2load, reqFile: reqFile, fail: h2fail}
	}
	return nil
}

// runTool runs tool name once on a cell, pinned to the client CPUs (under
// callgrind when c.callgrind), scale times as long (or as many RPCs) as
// the flags say, and returns its row; a failure is the row's err.
func runTool(ctx context.Context, c *lgConfig, name, addr, layout string, n int, reqFile, h2fail string, scale int) lgRow {
	r := lgRow{tool: name}
	t := toolNamed(name, c, reqFile, h2fail)
	if t == nil {
		r.err = "unknown tool"
		return r
	}
	if why := cli.Executable(t.binary()); why != "" {
		r.err = why
		return r
	}
	if rf, ok := t.(refuser); ok && rf.refused() != "" {
		r.err = rf.refused()
		return r
	}
	run := toolRun{addr: addr, layout: layout, n: n, seconds: c.seconds * scale, rpcs: c.callgrindRPCs * scale,
		callgrind: c.callgrind, out: filepath.Join(c.work, name+".out")}
	argv := t.command(run)
	cgOut := filepath.Join(c.work, "callgrind."+name)
	if c.callgrind {
		// Go's asynchronous preemption signals trip callgrind 3.19's signal
		// bookkeeping (an assertion in threads.c); without them Go runs.
		argv = append([]string{"env", "GODEBUG=asyncpreemptoff=1", "valgrind", "--tool=callgrind", "--callgrind-out-file=" + cgOut}, argv...)
	}
	o, err := runPinned(ctx, c.clientCPUs, argv...)
	if cl, ok := t.(cleaner); ok {
		cl.cleanup()
	}
	if err != nil {
		r.err = runError(t, err, o.stderr, c.callgrind)
		return r
	}
	r.cpu = o.cpu
	err = t.parse(run, o.stdout, &r)
	if err == nil && c.callgrind {
		r.instr, err = parseCallgrind(cgOut)
	}
	if err != nil {
		r.err = err.Error()
	}
	return r
}

// runError says why a run failed: its error, or under callgrind valgrind's
// failed assertion (with the tool's hint, if it has one).
func runError(t tool, err error, stderr string, callgrind bool) string {
	i := strings.Index(stderr, "Assertion")
	if !callgrind || i < 0 {
		return err.Error()
	}
	line, _, _ := strings.Cut(stderr[i:], "\n")
	msg := "valgrind failed: " + line
	if h, ok := t.(valgrindHinter); ok {
		msg += " (" + h.valgrindHint() + ")"
	}
	return msg
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
