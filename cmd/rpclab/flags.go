// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// The sweep commands (sweep, demo, compare) compose their command lines of
// flag groups, each mapping to one part of a run: targetFlags and
// stepFlags to the loadgen.Spec, outputFlags to the session's outputs,
// serverFlags to its child server, netemFlags to its proxy, openFlags to
// a loadgen.OpenSpec (or a driver.Open), --workers to the remotes. A
// command registers only the groups it reads.

// flagGroup is the names of the flags one group registered, so that a
// mode that does not read the group can refuse it whole (its own check,
// not a list kept beside the flags).
type flagGroup []string

// addGroup registers a group's flags on f and returns their names.
func addGroup(f *pflag.FlagSet, register func(*pflag.FlagSet)) flagGroup {
	own := pflag.NewFlagSet("", pflag.ContinueOnError)
	register(own)
	var g flagGroup
	own.VisitAll(func(fl *pflag.Flag) { g = append(g, fl.Name) })
	f.AddFlagSet(own)
	return g
}

// refuse is a usage error naming the first flag of g that fs was given,
// "--name why"; nil when none was.
func (g flagGroup) refuse(fs *pflag.FlagSet, why string) error {
	for _, name := range g {
		if fs.Changed(name) {
			return usage.Wrap(fmt.Errorf("--%s %s", name, why))
		}
	}
	return nil
}

// targetFlags say what is called and how: the server, the ping service,
// its payload and the deadlines.
type targetFlags struct {
	target      string
	service     string
	payload     string
	dialTimeout time.Duration
	rpcTimeout  time.Duration
}

func (tf *targetFlags) register(f *pflag.FlagSet) {
	f.StringVar(&tf.target, "target", "", "host:port of a server of --service (default: start rpclab's own server as a child process on a free loopback port)")
	f.StringVar(&tf.service, "service", "benchmark", "ping service: benchmark (grpc.testing.BenchmarkService), or ydb-debug (YDB's Ydb.Debug.V1.DebugService: PingPlainGrpc for --rpc unary, PingStream for streaming; no payload), as a YDB node's gRPC layer answers it")
	f.StringVar(&tf.payload, "payload", "0", "request and response payload: bytes, or with a unit (1KiB, 64KB)")
	f.DurationVar(&tf.dialTimeout, "dial-timeout", 5*time.Second, "how long a step waits for its connections before it fails")
	f.DurationVar(&tf.rpcTimeout, "rpc-timeout", 0, "deadline of each RPC (0: none; the step's end cancels what is left)")
}

// stepFlags are the steps of a sweep: every combination of layout, RPC
// kind and in-flight count, each warmed up and measured.
type stepFlags struct {
	inflight    []int
	minInflight int
	maxInflight int
	step        int
	conns       []string
	rpcs        []string
	warmup      time.Duration
	autoWarmup  time.Duration
	interval    time.Duration
}

// sweepDefaults are the defaults that differ between sweep, demo and
// compare.
type sweepDefaults struct {
	inflight         []int
	conns            []string
	warmup, interval time.Duration
	out              string
}

func (sf *stepFlags) register(f *pflag.FlagSet, d sweepDefaults) {
	auto := adaptive.DefaultRule(loadgen.DefaultAutoMin, loadgen.DefaultAutoMax)
	f.IntSliceVar(&sf.inflight, "inflight", d.inflight, "in-flight counts to sweep (comma-separated; one worker per in-flight RPC)")
	f.IntVar(&sf.minInflight, "min-inflight", 0, "sweep in-flight from this count (instead of --inflight)")
	f.IntVar(&sf.maxInflight, "max-inflight", 0, "... up to this count")
	f.IntVar(&sf.step, "step", 1, "... in steps of this size")
	f.StringSliceVar(&sf.conns, "conn", d.conns, "connection layouts: shared (one connection), per-worker (one per worker), pool:N (N connections round-robin, N at most 1024), pool:N:least-loaded, pool:auto (a pool that sizes itself, pool.WithAdaptive, between 1 and 8 connections: 8 is the lab's largest fixed pool) or pool:auto:MIN:MAX (1 <= MIN <= MAX <= 1024)")
	f.StringSliceVar(&sf.rpcs, "rpc", []string{"unary"}, "RPC kinds: unary, streaming (bidi ping-pong, one stream per worker)")
	f.DurationVar(&sf.warmup, "warmup", d.warmup, "warm-up per step, not recorded (fresh connections every step)")
	f.DurationVar(&sf.autoWarmup, "auto-warmup", 0, fmt.Sprintf("warm-up of a pool:auto step in place of --warmup (0: until the pool can settle at the step's in-flight count, at least --warmup: %v for pool:auto:%d:%d at %d or more in flight, a %v decision then %v per connection added, then on while a trial is under way, at most %v more; Go client)",
		auto.SettleTime(auto.Max), auto.Min, auto.Max, auto.Max, auto.Interval, auto.TrialTime()+auto.Interval, auto.SettleWait()))
	f.DurationVar(&sf.interval, "interval", d.interval, "measured time per step")
}

// outputFlags are the files a sweep writes, checked by the session
// before anything starts (lab.CheckOutputs).
type outputFlags struct {
	out   string
	force bool
	csv   string
	// report and png are the HTML report and its charts, which demo
	// writes and compare registers (registerReport).
	report string
	png    string
}

func (of *outputFlags) register(f *pflag.FlagSet, out string) {
	f.StringVarP(&of.out, "out", "o", out, "write result records (JSON Lines) to this file; an existing non-empty file is refused (exit 2) unless --force")
	f.BoolVar(&of.force, "force", false, "overwrite an existing --out file (its earlier records are lost)")
	f.StringVar(&of.csv, "csv", "", "also write the table as CSV to this file")
}

// outputs are the session's outputs: the records file, opened by the
// session, and the files written whole at the end.
func (of *outputFlags) outputs() []lab.Output {
	return []lab.Output{
		{Name: "--out", Path: of.out, Keep: true, Open: true},
		{Name: "--csv", Path: of.csv},
		{Name: "--report", Path: of.report},
		{Name: "--png", Path: of.png, Dir: true},
	}
}

func (of *outputFlags) registerReport(f *pflag.FlagSet, report string) {
	f.StringVar(&of.report, "report", report, "write the HTML report with every client on one chart per metric to this file (empty: none)")
	f.StringVar(&of.png, "png", "", "also write the report's charts as PNG files in this directory")
}

// serverFlags are the child server's (without --target) and where the
// other languages' programs are.
type serverFlags struct {
	noPin         bool
	serverOptions []string
	serverImpl    string
	clientsDir    string
}

func (sv *serverFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&sv.noPin, "no-pin", false, "do not pin the child server and the client to separate CPUs")
	f.StringSliceVar(&sv.serverOptions, "server-flag", nil, "extra flag for the child server, e.g. --server-flag=--num-stream-workers=2")
	f.StringVar(&sv.serverImpl, "server", "go", "child server implementation when there is no --target: go, or cpp (clients/cpp)")
	f.StringVar(&sv.clientsDir, "clients-dir", "", "the clients/ folder of an rpclab checkout (default: found above the working directory)")
}
