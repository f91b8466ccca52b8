// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

// A cell's rows of the load-generator comparison: each tool's figures,
// their medians over repeats, and the table that prints them.

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/rpclab/rpclab/bench/peers/internal/cli"
)

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
		return cli.MedianOf(v)
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
	s.requests, s.rps, s.srvCPU = int64(math.Round(cli.MedianOf(req))), cli.MedianOf(rps), time.Duration(cli.MedianOf(srv))
	if len(p50) > 0 {
		s.p50 = time.Duration(cli.MedianOf(p50))
	}
	if len(p99) > 0 {
		s.p99 = time.Duration(cli.MedianOf(p99))
	}
	if len(errs) > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d repeats failed (%s)", len(errs), len(runs), strings.Join(errs, "; ")))
	}
	s.note = strings.Join(notes, "; ")
	return s
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
