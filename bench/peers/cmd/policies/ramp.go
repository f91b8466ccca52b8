// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/bench/peers/internal/cli"
	"github.com/rpclab/rpclab/bench/peers/policy"
)

// rampConfig is what `policies ramp` runs.
type rampConfig struct {
	rpclab     string
	serverCPUs string
	runs       []policy.Policy // the fixed sizes first, then the policies
	fixed      int             // how many of runs are fixed sizes
	repeats    int
	events     string // a file for the adaptive runs' decisions ("" none)
	spec       policy.RampSpec
}

func parseRampFlags(args []string, stderr io.Writer) (*rampConfig, error) {
	fs := flag.NewFlagSet("policies ramp", flag.ContinueOnError)
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
	fs.IntVar(&c.repeats, "repeats", 1, "ramps of every run, the runs in rotating order each repeat; with more than one the table gives each step's median P99 and its range")
	fs.StringVar(&c.events, "events", "", "write every adaptive run's decisions (each resize and change of reason, with the signals it was taken on) to this file")
	fs.IntVar(&c.spec.MaxOutstanding, "max-outstanding", 2000, "the most RPCs in flight; a send that finds them all taken waits, its latency still from its intended time")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	var up []float64
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("%w: --rates: %q is not a positive number of RPCs per second", cli.ErrUsage, f)
		}
		up = append(up, r)
	}
	c.spec.Rates = policy.Mirror(up)
	if *fixed != "" {
		sizes, err := cli.ParseInts("--fixed", *fixed)
		if err != nil {
			return nil, err
		}
		for _, n := range sizes {
			c.runs = append(c.runs, policy.FixedPolicy(n))
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
		return nil, fmt.Errorf("%w: --step %v: want a positive duration", cli.ErrUsage, c.spec.Step)
	case c.spec.Tail < 0:
		return nil, fmt.Errorf("%w: --tail %v: want 0 or more", cli.ErrUsage, c.spec.Tail)
	case c.spec.Warmup < 0:
		return nil, fmt.Errorf("%w: --warmup %v: want 0 or more", cli.ErrUsage, c.spec.Warmup)
	case c.spec.MaxConns < 1:
		return nil, fmt.Errorf("%w: --max %d: want at least 1", cli.ErrUsage, c.spec.MaxConns)
	case c.spec.MaxOutstanding < 1:
		return nil, fmt.Errorf("%w: --max-outstanding %d: want at least 1", cli.ErrUsage, c.spec.MaxOutstanding)
	case c.repeats < 1:
		return nil, fmt.Errorf("%w: --repeats %d: want at least 1", cli.ErrUsage, c.repeats)
	}
	if c.events != "" {
		// Found out now, not after the ramps have run.
		if err := os.WriteFile(c.events, nil, 0o644); err != nil {
			return nil, fmt.Errorf("%w: --events: %v", cli.ErrUsage, err)
		}
	}
	if err := cli.CheckServer(c.rpclab, c.serverCPUs); err != nil {
		return nil, err
	}
	return c, nil
}

// runRamp runs the same open-loop ramp on one pool per fixed size and per
// sizing policy and prints one row per step and run, then one summary row
// per run.
func runRamp(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	c, err := parseRampFlags(args, stderr)
	if err != nil {
		return err
	}
	srv, err := cli.StartServe(ctx, c.rpclab, c.serverCPUs)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()
	// byRun[i] holds c.runs[i]'s ramps, one per repeat; each repeat takes
	// the runs in an order rotated by one, so that none always follows
	// the same run.
	byRun := make([][]policy.Ramp, len(c.runs))
	for rep := range c.repeats {
		for k := range c.runs {
			i := (k + rep) % len(c.runs)
			fmt.Fprintf(stderr, "policies ramp: %s (repeat %d of %d)\n", c.runs[i].Name, rep+1, c.repeats)
			r, err := policy.RunRamp(ctx, srv.Addr, c.runs[i], c.spec)
			if err != nil {
				return err
			}
			byRun[i] = append(byRun[i], r)
		}
	}
	if c.events != "" {
		// After the table, so that a file that cannot be written loses
		// nothing measured.
		defer func() {
			if werr := writeRampEvents(c.events, byRun, c.spec.Step); err == nil {
				err = werr
			}
		}()
	}
	fmt.Fprintf(stdout, "open-loop ramp of unary pings on one pool per run (policies 1..%d connections), server rpclab serve on CPUs %s; %v unrecorded at the first rate, then %v per rate, at most %d in flight, then up to %v without load",
		c.spec.MaxConns, c.serverCPUs, c.spec.Warmup, c.spec.Step, c.spec.MaxOutstanding, c.spec.Tail)
	if c.repeats == 1 {
		fmt.Fprintln(stdout)
		ramps := make([]policy.Ramp, len(byRun))
		for i, rs := range byRun {
			ramps[i] = rs[0]
		}
		return printRamps(stdout, ramps, c.fixed)
	}
	fmt.Fprintf(stdout, "; %d interleaved repeats, medians\n", c.repeats)
	return printRampMedians(stdout, byRun, c.fixed)
}

// writeRampEvents writes the decisions of every adaptive ramp in byRun to
// path, one line each, timed from the ramp's first recorded step (and
// numbered by the step under way), with the signals each was taken on.
func writeRampEvents(path string, byRun [][]policy.Ramp, step time.Duration) error {
	var b strings.Builder
	fmt.Fprintln(&b, "run\trepeat\tstep\t"+strings.Join(policy.EventColumns, "\t"))
	for _, rs := range byRun {
		for j, r := range rs {
			if !r.Adaptive {
				continue
			}
			for _, e := range r.Events {
				at := e.At.Sub(r.Start)
				k := "warm-up"
				switch i := int(at / step); {
				case at < 0:
				case i >= len(r.Steps):
					k = "tail"
				default:
					k = strconv.Itoa(i + 1)
				}
				fmt.Fprintf(&b, "%s\t%d\t%s\t%s\n", r.Policy, j+1, k, strings.Join(policy.EventRow(e, r.Start), "\t"))
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("policies ramp: --events: %w", err)
	}
	return nil
}

// printRamps prints the steps of every run, rate by rate, with each P99
// over the best (least) P99 of the fixed sizes (the first fixed of ramps)
// at that step, then one summary row per run.
func printRamps(w io.Writer, ramps []policy.Ramp, fixed int) error {
	p99s := make([][]time.Duration, len(ramps))
	for k, r := range ramps {
		for _, s := range r.Steps {
			p99s[k] = append(p99s[k], s.P99)
		}
	}
	best := bestFixed(p99s, fixed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\toffered rpc/s\trun\tachieved rpc/s\tp99 µs\tx best fixed\tfailed\tunsent\twaits\tconns\tmost conns\tresizes\t")
	for i := range ramps[0].Steps {
		for _, r := range ramps {
			s := r.Steps[i]
			fmt.Fprintf(tw, "%d\t%.0f\t%s\t%.0f\t%.0f\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", i+1, s.Offered, r.Policy, s.Achieved,
				float64(s.P99)/1e3, p99Ratio(s.P99, best[i]), s.Failed, s.Unsent, s.Hits, s.Conns, s.MaxConns, s.Resizes)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmost conns\tresizes\tfailed\tfailed in a resize's step\tback at min after the load fell\tsteps within 10% of best fixed\t")
	for k, r := range ramps {
		most, resizes, failed := 0, 0, int64(0)
		for _, s := range r.Steps {
			most, resizes, failed = max(most, s.MaxConns), resizes+s.Resizes, failed+s.Failed
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", r.Policy, most, resizes, failed, r.FailedAtResize, backAtMin(r, most), within(p99s[k], best))
	}
	return tw.Flush()
}

// printRampMedians prints byRun (each run's ramps, one per repeat) as
// printRamps does one ramp per run, with each step's median P99 and
// achieved rate, the P99's range over the repeats, and its median over
// the least median of the fixed sizes; counts are summed over the
// repeats, sizes listed per repeat.
func printRampMedians(w io.Writer, byRun [][]policy.Ramp, fixed int) error {
	p99s := make([][]time.Duration, len(byRun))
	for k, rs := range byRun {
		for i := range rs[0].Steps {
			v := make([]float64, len(rs))
			for j, r := range rs {
				v[j] = float64(r.Steps[i].P99)
			}
			p99s[k] = append(p99s[k], time.Duration(cli.MedianOf(v)))
		}
	}
	best := bestFixed(p99s, fixed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\toffered rpc/s\trun\tachieved rpc/s\tp99 µs\tp99 range µs\tx best fixed\tfailed\tunsent\twaits\tconns\tresizes\t")
	for i := range byRun[0][0].Steps {
		for k, rs := range byRun {
			ach := make([]float64, len(rs))
			lo, hi := rs[0].Steps[i].P99, rs[0].Steps[i].P99
			var failed, unsent, hits int64
			var conns []string
			resizes := 0
			for j, r := range rs {
				s := r.Steps[i]
				ach[j] = s.Achieved
				lo, hi = min(lo, s.P99), max(hi, s.P99)
				failed, unsent, hits, resizes = failed+s.Failed, unsent+s.Unsent, hits+s.Hits, resizes+s.Resizes
				conns = append(conns, strconv.Itoa(s.Conns))
			}
			fmt.Fprintf(tw, "%d\t%.0f\t%s\t%.0f\t%.0f\t%.0f-%.0f\t%s\t%d\t%d\t%d\t%s\t%d\t\n", i+1, rs[0].Steps[i].Offered, rs[0].Policy,
				cli.MedianOf(ach), float64(p99s[k][i])/1e3, float64(lo)/1e3, float64(hi)/1e3, p99Ratio(p99s[k][i], best[i]),
				failed, unsent, hits, strings.Join(conns, ","), resizes)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmost conns\tresizes\tfailed\tfailed in a resize's step\tback at min after the load fell\tsteps within 10% of best fixed\t")
	for k, rs := range byRun {
		most, failed, atResize := 0, int64(0), int64(0)
		var resizes, back []string
		for _, r := range rs {
			m, n := 0, 0
			for _, s := range r.Steps {
				m, n, failed = max(m, s.MaxConns), n+s.Resizes, failed+s.Failed
			}
			most, atResize = max(most, m), atResize+r.FailedAtResize
			resizes, back = append(resizes, strconv.Itoa(n)), append(back, backAtMin(r, m))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\t%s\t\n", rs[0].Policy, most, strings.Join(resizes, ","), failed, atResize,
			perRepeat(back), within(p99s[k], best))
	}
	return tw.Flush()
}

// bestFixed is, step by step, the least positive P99 of the first fixed
// runs of p99s (run by step); 0 where none has one.
func bestFixed(p99s [][]time.Duration, fixed int) []time.Duration {
	if len(p99s) == 0 {
		return nil
	}
	best := make([]time.Duration, len(p99s[0]))
	for _, run := range p99s[:fixed] {
		for i, p := range run {
			if p > 0 && (best[i] == 0 || p < best[i]) {
				best[i] = p
			}
		}
	}
	return best
}

// p99Ratio is p over best to two places, "-" when either is unknown.
func p99Ratio(p, best time.Duration) string {
	if best <= 0 || p <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(p)/float64(best))
}

// within counts the steps whose P99 is at most 1.1 times the best fixed
// size's, as "k of n" (steps with no P99 on either side not counted).
func within(p99 []time.Duration, best []time.Duration) string {
	k, n := 0, 0
	for i, p := range p99 {
		if p <= 0 || best[i] <= 0 {
			continue
		}
		n++
		if 10*p <= 11*best[i] {
			k++
		}
	}
	return fmt.Sprintf("%d of %d", k, n)
}

// perRepeat is one value for every repeat when all are the same, else
// each repeat's, in order (two repeats alike beside a third are both shown).
func perRepeat(vals []string) string {
	if len(slices.Compact(slices.Clone(vals))) == 1 {
		return vals[0]
	}
	return strings.Join(vals, ", ")
}

// backAtMin says when the adaptive ramp r, which had at most most
// connections, was back at its min after the load fell.
func backAtMin(r policy.Ramp, most int) string {
	switch {
	case !r.Adaptive:
		return "- (fixed)"
	case r.BackAtMin && most <= r.Min:
		return "never grew"
	case r.BackAtMin:
		return fmt.Sprintf("%.1f s", r.BackToMin.Seconds())
	default:
		return "not by the end"
	}
}
