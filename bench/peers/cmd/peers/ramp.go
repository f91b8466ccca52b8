// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/bench/peers"
)

// rampConfig is what `peers ramp` runs.
type rampConfig struct {
	rpclab     string
	serverCPUs string
	runs       []peers.Policy // the fixed sizes first, then the policies
	fixed      int            // how many of runs are fixed sizes
	spec       peers.RampSpec
}

func parseRampFlags(args []string, stderr io.Writer) (*rampConfig, error) {
	fs := flag.NewFlagSet("peers ramp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &rampConfig{}
	fs.StringVar(&c.rpclab, "rpclab", "", "rpclab binary (the server, as `rpclab serve`)")
	fs.StringVar(&c.serverCPUs, "server-cpus", "1", "CPUs of the server (taskset list)")
	rates := fs.String("rates", "5000,10000,20000,40000,60000,80000", "offered RPC/s of the rising steps (comma-separated); the ramp then falls back through them")
	pols := fs.String("policies", strings.Join(policyNames(), ","), "sizing policies to run (comma-separated)")
	fixed := fs.String("fixed", "1,2,4,8", "fixed pool sizes to run through the same ramp (comma-separated; \"\" for none)")
	fs.DurationVar(&c.spec.Warmup, "warmup", 5*time.Second, "the first rate, unrecorded, before the first step (the client's start is not measured)")
	fs.DurationVar(&c.spec.Step, "step", 20*time.Second, "how long each rate is held")
	fs.DurationVar(&c.spec.Tail, "tail", 4*time.Minute, "after the last step the load stops; how long to wait for an adaptive pool to be back at its min")
	fs.IntVar(&c.spec.MaxConns, "max", 8, "the most connections any policy may open (every policy starts at 1)")
	fs.IntVar(&c.spec.MaxOutstanding, "max-outstanding", 2000, "the most RPCs in flight; a send that finds them all taken waits, its latency still from its intended time")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	var up []float64
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("%w: --rates: %q is not a positive number of RPCs per second", errUsage, f)
		}
		up = append(up, r)
	}
	c.spec.Rates = peers.Mirror(up)
	if *fixed != "" {
		sizes, err := parseInts("--fixed", *fixed)
		if err != nil {
			return nil, err
		}
		for _, n := range sizes {
			c.runs = append(c.runs, peers.FixedPolicy(n))
		}
	}
	c.fixed = len(c.runs)
	policies, err := parsePolicies(*pols)
	if err != nil {
		return nil, err
	}
	c.runs = append(c.runs, policies...)
	switch {
	case c.spec.Step <= 0:
		return nil, fmt.Errorf("%w: --step %v: want a positive duration", errUsage, c.spec.Step)
	case c.spec.Tail < 0:
		return nil, fmt.Errorf("%w: --tail %v: want 0 or more", errUsage, c.spec.Tail)
	case c.spec.Warmup < 0:
		return nil, fmt.Errorf("%w: --warmup %v: want 0 or more", errUsage, c.spec.Warmup)
	case c.spec.MaxConns < 1:
		return nil, fmt.Errorf("%w: --max %d: want at least 1", errUsage, c.spec.MaxConns)
	case c.spec.MaxOutstanding < 1:
		return nil, fmt.Errorf("%w: --max-outstanding %d: want at least 1", errUsage, c.spec.MaxOutstanding)
	}
	if _, err := parseCPUList(c.serverCPUs); err != nil {
		return nil, fmt.Errorf("%w: --server-cpus: %v", errUsage, err)
	}
	if why := executable(c.rpclab); why != "" {
		return nil, fmt.Errorf("%w: --rpclab: %s (the server)", errUsage, why)
	}
	return c, nil
}

// runRamp runs the same open-loop ramp on one pool per fixed size and per
// sizing policy and prints one row per step and run, then one summary row
// per run.
func runRamp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseRampFlags(args, stderr)
	if err != nil {
		return err
	}
	srv, err := startServe(ctx, c.rpclab, c.serverCPUs)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()
	var ramps []peers.Ramp
	for _, pol := range c.runs {
		fmt.Fprintf(stderr, "peers ramp: %s\n", pol.Name)
		r, err := peers.RunRamp(ctx, srv.Addr, pol, c.spec)
		if err != nil {
			return err
		}
		ramps = append(ramps, r)
	}
	fmt.Fprintf(stdout, "open-loop ramp of unary pings on one pool per run (policies 1..%d connections), server rpclab serve on CPUs %s; %v unrecorded at the first rate, then %v per rate, at most %d in flight, then up to %v without load\n",
		c.spec.MaxConns, c.serverCPUs, c.spec.Warmup, c.spec.Step, c.spec.MaxOutstanding, c.spec.Tail)
	return printRamps(stdout, ramps, c.fixed)
}

// printRamps prints the steps of every run, rate by rate, with each P99
// over the best (least) P99 of the fixed sizes (the first fixed of ramps)
// at that step, then one summary row per run.
func printRamps(w io.Writer, ramps []peers.Ramp, fixed int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\toffered rpc/s\trun\tachieved rpc/s\tp99 µs\tx best fixed\tfailed\tunsent\twaits\tconns\tmost conns\tresizes\t")
	for i := range ramps[0].Steps {
		best := time.Duration(0)
		for _, r := range ramps[:fixed] {
			if p := r.Steps[i].P99; p > 0 && (best == 0 || p < best) {
				best = p
			}
		}
		for _, r := range ramps {
			s := r.Steps[i]
			ratio := "-"
			if best > 0 && s.P99 > 0 {
				ratio = fmt.Sprintf("%.2f", float64(s.P99)/float64(best))
			}
			fmt.Fprintf(tw, "%d\t%.0f\t%s\t%.0f\t%.0f\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", i+1, s.Offered, r.Policy, s.Achieved,
				float64(s.P99)/1e3, ratio, s.Failed, s.Unsent, s.Hits, s.Conns, s.MaxConns, s.Resizes)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmost conns\tresizes\tfailed\tfailed in a resize's step\tback at min after the load fell\t")
	for _, r := range ramps {
		most, resizes, failed := 0, 0, int64(0)
		for _, s := range r.Steps {
			most, resizes, failed = max(most, s.MaxConns), resizes+s.Resizes, failed+s.Failed
		}
		back := "- (fixed)"
		switch {
		case r.Adaptive && r.BackAtMin && most <= r.Min:
			back = "never grew"
		case r.Adaptive && r.BackAtMin:
			back = fmt.Sprintf("%.1f s", r.BackToMin.Seconds())
		case r.Adaptive:
			back = "not by the end"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", r.Policy, most, resizes, failed, r.FailedAtResize, back)
	}
	return tw.Flush()
}
