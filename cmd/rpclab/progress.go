// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// drawer draws a session's events on stderr: a line when a child starts,
// a line when a step starts and one when it ends, and, when stderr is a
// terminal, a live bar under them instead of the start lines (see bar).
type drawer struct {
	w       io.Writer
	bar     *bar // nil when w is not a terminal
	compare bool // say which client starts (rpclab compare)
	started time.Time
	// rates are an open loop's offered rates, ascending (nil: a closed
	// loop), and slo its objective (nil: none); rate is the index of the
	// running step's rate, prev its step and last its last record, so
	// that a layout's rates left unmeasured are said with their reason.
	rates []float64
	slo   *verdict.SLO
	rate  int
	prev  *loadgen.Step
	last  *result.Record
}

// openLoop makes d draw an open loop's steps: each by its rate and
// connections, and the rates a layout skips with why.
func (d *drawer) openLoop(open *loadgen.OpenSpec, slo *verdict.SLO) {
	if open == nil {
		return
	}
	d.rates = slices.Clone(open.Rates)
	slices.Sort(d.rates)
	d.slo = slo
}

func newDrawer(w io.Writer, compare bool) *drawer {
	d := &drawer{w: w, compare: compare}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		d.bar = &bar{w: w}
	}
	return d
}

// event draws e; it is the session's progress callback.
func (d *drawer) event(e lab.Event) {
	switch e.Kind {
	case lab.ServerStarted:
		fmt.Fprintf(d.w, "rpclab: started server %s (pid %d)%s\n", e.Addr, e.Pid, pinNote(e.CPUs))
	case lab.ProxyStarted:
		fmt.Fprintf(d.w, "rpclab: netem proxy %s -> %s (pid %d): up %s, down %s\n", e.Addr, e.Upstream, e.Pid, e.Network.Up, e.Network.Down)
	case lab.ClientStarted:
		d.stop()
		if d.compare {
			fmt.Fprintf(d.w, "rpclab: %s client: %s\n", e.Client, strings.Join(e.Conns, ","))
		}
	case lab.ClientFailed:
		d.stop()
		fmt.Fprintf(d.w, "rpclab: the %s client: %v\n", e.Client, e.Err)
	case lab.StepStarted:
		d.nextRate(e.Step)
		d.started = time.Now()
		if d.bar != nil {
			d.bar.start(e.I, e.N, e.Step)
			return
		}
		fmt.Fprintf(d.w, "%s started\n", d.head(e.I, e.N, e.Step))
	case lab.StepEnded:
		d.last = e.Record
		line := stepLine(d.head(e.I, e.N, e.Step), e.Record)
		if !d.started.IsZero() {
			line += fmt.Sprintf("  (%.1fs)", time.Since(d.started).Seconds())
			d.started = time.Time{}
		}
		if d.bar != nil {
			d.bar.end(e.I, e.N, line, e.Record)
			return
		}
		fmt.Fprintln(d.w, line)
	}
}

// stop clears the bar, if any (at the end of each client's sweep), and
// says which rates the last layout skipped.
func (d *drawer) stop() {
	if d.bar != nil {
		d.bar.stop()
	}
	d.skipped()
	d.prev = nil
}

// nextRate moves to the rate of the open-loop step st starts: the next
// of the same step, or the first of a new one (saying which rates the
// previous one skipped).
func (d *drawer) nextRate(st loadgen.Step) {
	if d.rates == nil {
		return
	}
	if d.prev != nil && *d.prev == st {
		d.rate++
		return
	}
	d.skipped()
	d.prev, d.rate = &st, 0
}

// skipped says, when the running open-loop layout stopped before its
// highest rate, which rates it skipped and why.
func (d *drawer) skipped() {
	if d.prev == nil || d.rate >= len(d.rates)-1 {
		return
	}
	if d.bar != nil {
		d.bar.stop()
	}
	why := "its step stopped the sweep"
	if d.last != nil && d.slo != nil {
		if ok, w := d.slo.Sustained(d.last); !ok {
			why = fmt.Sprintf("the step at %.0f/s missed %s (%s)", d.rates[d.rate], d.slo, w)
		}
	}
	left := make([]string, 0, len(d.rates)-d.rate-1)
	for _, r := range d.rates[d.rate+1:] {
		left = append(left, fmt.Sprintf("%.0f/s", r))
	}
	fmt.Fprintf(d.w, "rpclab: %s: skipped rates %s: %s\n", d.prev.Conn, strings.Join(left, ", "), why)
	d.rate = len(d.rates)
}

// head names step i of n: a closed loop's by its in-flight count, an
// open loop's by its rate and connections.
func (d *drawer) head(i, n int, s loadgen.Step) string {
	if d.rates == nil || d.rate >= len(d.rates) {
		return stepHead(i, n, s)
	}
	conns := "1"
	switch s.Conn.Kind {
	case loadgen.PerWorker:
		conns = fmt.Sprint(s.Inflight)
	case loadgen.Pooled:
		conns = fmt.Sprint(s.Conn.N)
	case loadgen.AutoPool:
		conns = fmt.Sprintf("%d-%d", s.Conn.Min, s.Conn.N)
	}
	return fmt.Sprintf("[%d/%d] %-10s %-9s rate=%.0f/s conns=%s", i+1, n, s.Conn, s.RPC, d.rates[d.rate], conns)
}

func pinNote(cpus []int) string {
	if len(cpus) == 0 {
		return ""
	}
	return fmt.Sprintf(", client pinned to CPUs %v, server to the next", cpus)
}

// stepHead names step i of n.
func stepHead(i, n int, s loadgen.Step) string {
	return fmt.Sprintf("[%d/%d] %-10s %-9s inflight=%-4d", i+1, n, s.Conn, s.RPC, s.Inflight)
}

// stepLine describes a finished step, after its head.
func stepLine(head string, r *result.Record) string {
	line := head
	switch r.Status {
	case result.StatusOK:
		line += fmt.Sprintf(" %9.0f req/s  p99 %7.1f µs  conns %d", r.ThroughputRPS, float64(r.Latency.P99NS)/1e3, r.ConnsObserved)
		if len(r.Errors) > 0 {
			var n int64
			for _, c := range r.Errors {
				n += c
			}
			line += fmt.Sprintf("  errors %d", n)
		}
	default:
		line += " " + statusText(r.Status, r.Error)
	}
	return line
}

// statusText is "status: error", without saying the status twice when the
// error starts with it ("interrupted: interrupted: ...").
func statusText(status, msg string) string {
	if msg == "" {
		return status
	}
	if strings.HasPrefix(msg, status+":") || msg == status {
		return msg
	}
	return status + ": " + msg
}
