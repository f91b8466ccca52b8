// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command ratios prints, from several runs of the same sweep (one records
// file per run), each layout's throughput as a ratio to a base layout at
// every in-flight count, run by run, and the range over the runs; then the
// same for client CPU per RPC (where both steps measured it). A ratio the
// README reads as a finding is printed by this command from repeated runs:
//
//	for i in 1 2 3; do rpclab sweep ... -o run$i.jsonl; done
//	go run ./experiments/ratios run1.jsonl run2.jsonl run3.jsonl
//
// Steps that are not ok are left out; a cell missing in a run is shown as -.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ratios", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "shared", "the layout every other layout is divided by")
	best := fs.String("best", "", "instead: treat the files as repeats of one run and set this layout (e.g. pool:auto) beside the best other layout at each in-flight count, medians over the repeats, with both sides' connections as the kernel saw them and the server's CPU per RPC over the best layout's (a miss at the same size with the server more than 1.1x slower is marked: the host ran slower for that window) and the ratio paired within each repeat, median and range (a second view, not the bar); then every layout beside the best of the others but this one, and how often each holds --bar")
	maxOther := fs.Float64("max-other", 1, "leave out the steps on whose CPUs other work (other processes, and the hypervisor's steal) took more than this share, as rpclab's verdict reads host_cpu; 1 keeps every step")
	bar := fs.Float64("bar", 0.9, "with --best: the ratio to the best other layout's throughput a layout is counted as holding")
	cpuBar := fs.Float64("cpu-bar", 1.1, "with --best: the most a layout's client CPU per RPC may be over the best other layout's for it to hold the bar (a layout that out-carries every other holds it whatever its CPU)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./experiments/ratios [--max-other SHARE] [--base LAYOUT | --best LAYOUT [--bar RATIO] [--cpu-bar RATIO]] RUN.jsonl...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if !(*bar > 0 && *bar <= 1) {
		fmt.Fprintf(stderr, "ratios: --bar %v: want a ratio in (0, 1]\n", *bar)
		return 2
	}
	if !(*cpuBar >= 1 && !math.IsInf(*cpuBar, 0)) {
		fmt.Fprintf(stderr, "ratios: --cpu-bar %v: want a ratio of at least 1\n", *cpuBar)
		return 2
	}
	if !(*maxOther >= 0 && *maxOther <= 1) {
		fmt.Fprintf(stderr, "ratios: --max-other %v: want a share in [0, 1]\n", *maxOther)
		return 2
	}
	var runs [][]result.Record
	left := 0
	for _, path := range fs.Args() {
		set, err := result.ReadAllFile(context.Background(), path)
		if err != nil {
			fmt.Fprintf(stderr, "ratios: %v\n", err)
			return 1
		}
		recs, n := quiet(set.Ping, *maxOther)
		runs, left = append(runs, recs), left+n
	}
	if left > 0 {
		fmt.Fprintf(stdout, "left out %d steps on whose CPUs other work took more than %.2f\n\n", left, *maxOther)
	}
	if *best != "" {
		rows, err := compareBest(runs, *best)
		if err != nil {
			fmt.Fprintf(stderr, "ratios: %v\n", err)
			return 1
		}
		printBest(stdout, rows, *best, *bar, *cpuBar)
		fmt.Fprintln(stdout)
		printEach(stdout, compareEach(runs, *best), *best, *bar, *cpuBar)
		return 0
	}
	t, err := build(runs, *base)
	if err != nil {
		fmt.Fprintf(stderr, "ratios: %v\n", err)
		return 1
	}
	t.print(stdout, fs.Args())
	return 0
}

// quiet is recs less the steps on whose CPUs other work took more than
// maxOther (verdict.OtherShare), and how many it left out.
func quiet(recs []result.Record, maxOther float64) ([]result.Record, int) {
	if maxOther >= 1 {
		return recs, 0
	}
	var out []result.Record
	for i := range recs {
		if share, ok := verdict.OtherShare(&recs[i]); ok && share > maxOther {
			continue
		}
		out = append(out, recs[i])
	}
	return out, len(recs) - len(out)
}

// errNoBase: no run has an ok step of the base layout.
var errNoBase = errors.New("no run has an ok step of the base layout")

// cell is one (series, layout, in-flight) position; ratio[i] is run i's
// throughput over the base layout's at the same in-flight, cpu[i] its
// client CPU per RPC over the base layout's (0: missing).
type cell struct {
	series, layout string
	inflight       int
	ratio, cpu     []float64
}

type table struct {
	base  string
	cells []*cell
}

// series names what stays fixed across layouts: client, target, RPC kind,
// payload and load model.
func series(r *result.Record) string {
	return fmt.Sprintf("%s client -> %s, %s, %d B, %s", r.Env.Language, verdict.TargetLabel(r),
		r.Spec.RPC, r.Spec.PayloadBytes, r.Spec.LoadModel)
}

func build(runs [][]result.Record, base string) (*table, error) {
	t := &table{base: base}
	index := map[string]*cell{}
	found := false
	for i, recs := range runs {
		bases := map[string]*result.Record{} // series|layout|inflight -> its ok step
		for j := range recs {
			r := &recs[j]
			if r.Status == result.StatusOK {
				bases[series(r)+"|"+verdict.ConnLabel(r)+"|"+strconv.Itoa(r.Spec.Inflight)] = r
			}
		}
		for j := range recs {
			r := &recs[j]
			layout := verdict.ConnLabel(r)
			if r.Status != result.StatusOK || layout == base {
				continue
			}
			s, n := series(r), strconv.Itoa(r.Spec.Inflight)
			b := bases[s+"|"+base+"|"+n]
			if b == nil || b.ThroughputRPS <= 0 {
				continue
			}
			found = true
			k := s + "|" + layout + "|" + n
			c := index[k]
			if c == nil {
				c = &cell{series: s, layout: layout, inflight: r.Spec.Inflight,
					ratio: make([]float64, len(runs)), cpu: make([]float64, len(runs))}
				index[k] = c
				t.cells = append(t.cells, c)
			}
			c.ratio[i] = r.ThroughputRPS / b.ThroughputRPS
			if b.ClientCPUNSPerRPC > 0 {
				c.cpu[i] = r.ClientCPUNSPerRPC / b.ClientCPUNSPerRPC
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%w %q", errNoBase, base)
	}
	slices.SortStableFunc(t.cells, func(a, b *cell) int {
		if c := strings.Compare(a.series, b.series); c != 0 {
			return c
		}
		if c := strings.Compare(a.layout, b.layout); c != 0 {
			return c
		}
		return a.inflight - b.inflight
	})
	return t, nil
}

// span is the smallest and largest of the ratios that are there (above 0).
func span(ratios []float64) (lo, hi float64, n int) {
	for _, v := range ratios {
		if v <= 0 {
			continue
		}
		if n == 0 || v < lo {
			lo = v
		}
		if n == 0 || v > hi {
			hi = v
		}
		n++
	}
	return lo, hi, n
}

// print writes, per series, the throughput ratios, then the client CPU per
// RPC ratios of the cells that have one, then which file each run is. The
// cells are sorted by series (build), so each series is a run of them.
func (t *table) print(w io.Writer, names []string) {
	for i := 0; i < len(t.cells); {
		j := i + 1
		for j < len(t.cells) && t.cells[j].series == t.cells[i].series {
			j++
		}
		in, series := t.cells[i:j], t.cells[i].series
		if i > 0 {
			fmt.Fprintln(w)
		}
		i = j
		printMetric(w, in, len(names), fmt.Sprintf("%s: throughput / %s's", series, t.base),
			func(d *cell) []float64 { return d.ratio })
		if slices.ContainsFunc(in, func(d *cell) bool { _, _, n := span(d.cpu); return n > 0 }) {
			fmt.Fprintln(w)
			printMetric(w, in, len(names), fmt.Sprintf("%s: client CPU per RPC / %s's", series, t.base),
				func(d *cell) []float64 { return d.cpu })
		}
	}
	for i, n := range names {
		fmt.Fprintf(w, "run %d: %s\n", i+1, n)
	}
}

// printMetric writes one table: a row per cell with a ratio in any run.
func printMetric(w io.Writer, cells []*cell, runs int, title string, of func(*cell) []float64) {
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "layout\tinflight\t")
	for i := range runs {
		fmt.Fprintf(tw, "run %d\t", i+1)
	}
	fmt.Fprint(tw, "range\n")
	for _, c := range cells {
		ratios := of(c)
		lo, hi, n := span(ratios)
		if n == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t", c.layout, c.inflight)
		for _, v := range ratios {
			if v > 0 {
				fmt.Fprintf(tw, "%.2fx\t", v)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		if n == 1 {
			fmt.Fprintf(tw, "%.2fx (one run)\n", lo)
		} else {
			fmt.Fprintf(tw, "%.2f-%.2fx\n", lo, hi)
		}
	}
	tw.Flush()
}
