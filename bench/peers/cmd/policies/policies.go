// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/bench/peers/internal/cli"
	"github.com/rpclab/rpclab/bench/peers/policy"
	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// polConfig is what `policies run` runs.
type polConfig struct {
	rpclab           string
	serverCPUs       string
	inflight         []int
	policies         []policy.Policy
	maxConns         int
	warmup, interval time.Duration
	repeats          int
	link             policy.Link // each connection's emulated link and the pings' payload
	events           string      // a file for every run's decisions ("" none)
}

func parsePoliciesFlags(args []string, stderr io.Writer) (*polConfig, error) {
	fs := flag.NewFlagSet("policies run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &polConfig{}
	fs.StringVar(&c.rpclab, "rpclab", "", "rpclab binary (the server, as `rpclab serve`)")
	fs.StringVar(&c.serverCPUs, "server-cpus", "1", "CPUs of the server (taskset list)")
	inflight := fs.String("inflight", "1,2,4,8,16,32,64", "in-flight counts (comma-separated)")
	pols := fs.String("policies", strings.Join(policyNames(), ","), "sizing policies to run (comma-separated; the first is every ratio's base)")
	fs.IntVar(&c.maxConns, "max", 8, "the most connections any policy may open (every policy starts at 1)")
	fs.DurationVar(&c.warmup, "warmup", adaptive.DefaultRule(1, 8).SettleTime(8), "unmeasured time each run gives its policy to settle (the default is rpclab's rule's adaptive.Rule.SettleTime from 1 to 8 connections: a 1 s decision, then 13 s per connection it adds, a 12 s trial and a 1 s decision)")
	fs.DurationVar(&c.interval, "interval", 20*time.Second, "measured time per run")
	fs.IntVar(&c.repeats, "repeats", 3, "runs of every policy per in-flight count, the policies in rotating order each repeat; the table gives medians")
	rate := fs.String("rate", "0", "emulated bandwidth of each connection, each way, as tc writes it (100mbit, 1gbit; 0: unlimited): a per-connection limit, as a per-flow shaper's or one TCP flow's window over a long path, which more connections lift")
	delay := fs.Duration("delay", 0, "emulated one-way delay of each connection, each way")
	fs.IntVar(&c.link.Payload, "payload", 0, "request and response payload of each ping, bytes")
	fs.StringVar(&c.events, "events", "", "write every run's decisions (each resize and change of reason, with the signals it was taken on; timed from the run's measured interval, warm-up negative) to this file")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if c.events != "" {
		// Refused before anything is measured, as policies ramp does.
		if err := os.WriteFile(c.events, nil, 0o644); err != nil {
			return nil, fmt.Errorf("%w: --events: %v", cli.ErrUsage, err)
		}
	}
	var err error
	if c.inflight, err = cli.ParseInts("--inflight", *inflight); err != nil {
		return nil, err
	}
	if c.policies, err = parsePolicies(*pols); err != nil {
		return nil, err
	}
	bps, err := netem.ParseRate(*rate)
	if err != nil {
		return nil, fmt.Errorf("%w: --rate: %v", cli.ErrUsage, err)
	}
	c.link.Net = netem.Symmetric(netem.Link{Delay: *delay, RateBps: bps})
	if err := c.link.Net.Validate(); err != nil {
		return nil, fmt.Errorf("%w: --rate %s, --delay %v: %v", cli.ErrUsage, *rate, *delay, err)
	}
	if c.link.Payload < 0 || c.link.Payload > 4<<20 {
		return nil, fmt.Errorf("%w: --payload %d: want 0 to 4 MiB (gRPC's default message limit)", cli.ErrUsage, c.link.Payload)
	}
	switch {
	case c.maxConns < 1:
		return nil, fmt.Errorf("%w: --max %d: want at least 1", cli.ErrUsage, c.maxConns)
	case c.warmup < 0 || c.interval <= 0:
		return nil, fmt.Errorf("%w: --warmup %v, --interval %v: want a warm-up of 0 or more and a positive interval", cli.ErrUsage, c.warmup, c.interval)
	case c.repeats < 1:
		return nil, fmt.Errorf("%w: --repeats %d: want at least 1", cli.ErrUsage, c.repeats)
	}
	if err := cli.CheckServer(c.rpclab, c.serverCPUs); err != nil {
		return nil, err
	}
	return c, nil
}

// runPolicies runs the same closed-loop workload on rpclab's pool under
// each sizing policy and prints one row per in-flight count and policy.
func runPolicies(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	c, err := parsePoliciesFlags(args, stderr)
	if err != nil {
		return err
	}
	srv, err := cli.StartServe(ctx, c.rpclab, c.serverCPUs)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()
	fmt.Fprintf(stdout, "pool sizing policies: unary closed loop on rpclab's pool (1..%d connections), server rpclab serve on CPUs %s; %v warm-up, %v measured, median of %d\n",
		c.maxConns, c.serverCPUs, c.warmup, c.interval, c.repeats)
	if !c.link.Net.IsZero() || c.link.Payload > 0 {
		fmt.Fprintf(stdout, "each connection over an emulated link of %d bit/s and %v one-way delay each way (0: unlimited, none); payload %d B each way\n",
			c.link.Net.Up.RateBps, c.link.Net.Up.Delay, c.link.Payload)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "inflight\tpolicy\trpc/s\tx base\tp99 µs\tcpu µs/rpc\tconns\tmost conns\tresizes\tfailed\t")
	var all []policy.PolicyRun // for --events, in the order they ran
	if c.events != "" {
		// Also when a run fails or Ctrl-C stops them: every run that
		// ended is kept.
		defer func() {
			if werr := writePolicyEvents(c.events, all); err == nil {
				err = werr
			}
		}()
	}
	for _, n := range c.inflight {
		runs := map[string][]policy.PolicyRun{}
		for rep := range c.repeats {
			for i := range c.policies {
				pol := c.policies[(i+rep)%len(c.policies)]
				r, err := policy.RunPolicyOver(ctx, srv.Addr, pol, c.maxConns, n, c.warmup, c.interval, c.link)
				if err != nil {
					return err
				}
				runs[pol.Name] = append(runs[pol.Name], r)
				all = append(all, r)
			}
		}
		base := medianRun(runs[c.policies[0].Name])
		for _, pol := range c.policies {
			m := medianRun(runs[pol.Name])
			fmt.Fprintf(tw, "%d\t%s\t%.0f\t%.2f\t%.0f\t%.1f\t%d\t%d\t%d\t%d\t\n", n, pol.Name, m.RPS, m.RPS/base.RPS,
				float64(m.P99)/1e3, float64(m.CPUPerRPC)/1e3, m.Conns, m.MaxConns, m.Resizes, m.Failed)
		}
	}
	return tw.Flush()
}

// medianRun is the runs' medians, figure by figure (counts: the median
// run's by throughput).
func medianRun(runs []policy.PolicyRun) policy.PolicyRun {
	rps, p99, cpu := make([]float64, len(runs)), make([]float64, len(runs)), make([]float64, len(runs))
	mid := runs[0]
	for i, r := range runs {
		rps[i], p99[i], cpu[i] = r.RPS, float64(r.P99), float64(r.CPUPerRPC)
	}
	m := cli.MedianOf(rps)
	for _, r := range runs {
		if r.RPS == m {
			mid = r
		}
	}
	mid.RPS, mid.P99, mid.CPUPerRPC = m, time.Duration(cli.MedianOf(p99)), time.Duration(cli.MedianOf(cpu))
	return mid
}

// policyNames names policy.Policies, rpclab's first.
func policyNames() []string { return namesOf(policy.Policies()) }

// namesOf names pols, in order.
func namesOf(pols []policy.Policy) []string {
	var names []string
	for _, p := range pols {
		names = append(names, p.Name)
	}
	return names
}

// parsePolicies reads --policies: names of policy.Policies,
// comma-separated.
func parsePolicies(s string) ([]policy.Policy, error) {
	all := policy.Policies()
	names := namesOf(all)
	var out []policy.Policy
	for _, name := range strings.Split(s, ",") {
		i := slices.Index(names, name)
		if i < 0 {
			return nil, fmt.Errorf("%w: --policies: unknown policy %q (want some of %s)", cli.ErrUsage, name, strings.Join(names, ","))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// writePolicyEvents writes the decisions of every run in runs to path, one
// line each, under the run's policy, in-flight count and repeat, timed
// from the run's measured interval (negative: its warm-up).
func writePolicyEvents(path string, runs []policy.PolicyRun) error {
	var b strings.Builder
	fmt.Fprintln(&b, "policy\tinflight\trepeat\t"+strings.Join(policy.EventColumns, "\t"))
	type cell struct {
		policy   string
		inflight int
	}
	repeat := map[cell]int{}
	for _, r := range runs {
		k := cell{r.Policy, r.Inflight}
		repeat[k]++
		for _, e := range r.Events {
			fmt.Fprintf(&b, "%s\t%d\t%d\t%s\n", r.Policy, r.Inflight, repeat[k], strings.Join(policy.EventRow(e, r.Start), "\t"))
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("policies run: --events: %w", err)
	}
	return nil
}
