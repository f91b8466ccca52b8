// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/rpclab/rpclab/lab"
	"github.com/rpclab/rpclab/loadgen"
	"github.com/rpclab/rpclab/result"
)

// drawer draws a session's events on stderr: a line when a child starts,
// a line when a step starts and one when it ends, and, when stderr is a
// terminal, a live bar under them instead of the start lines (see bar).
type drawer struct {
	w       io.Writer
	bar     *bar // nil when w is not a terminal
	compare bool // say which client starts (rpclab compare)
	started time.Time
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
		d.started = time.Now()
		if d.bar != nil {
			d.bar.start(e.I, e.N, e.Step)
			return
		}
		fmt.Fprintf(d.w, "%s started\n", stepHead(e.I, e.N, e.Step))
	case lab.StepEnded:
		line := stepLine(e.I, e.N, e.Step, e.Record)
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

// stop clears the bar, if any (at the end of each client's sweep).
func (d *drawer) stop() {
	if d.bar != nil {
		d.bar.stop()
	}
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

// stepLine describes a finished step.
func stepLine(i, n int, s loadgen.Step, r *result.Record) string {
	line := stepHead(i, n, s)
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
