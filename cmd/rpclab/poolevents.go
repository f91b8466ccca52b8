// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/pool"
)

// eventColumns names the fields eventRow gives of a pool.Event, in order.
var eventColumns = []string{"at s", "from", "to", "reason", "mean in flight", "max write wait µs", "rpc/s",
	"with rpc/s", "without rpc/s", "back-off s"}

// eventRow is e as the text fields eventColumns names, its time in seconds
// after start (negative before it); the trial's two throughputs are zero
// on decisions that did not judge one.
func eventRow(e pool.Event, start time.Time) []string {
	f := func(format string, v any) string { return fmt.Sprintf(format, v) }
	return []string{
		f("%.1f", e.At.Sub(start).Seconds()), strconv.Itoa(e.From), strconv.Itoa(e.To), e.Reason,
		f("%.1f", e.MeanInFlight), f("%.0f", float64(e.WriteWait)/1e3), f("%.0f", e.Throughput),
		f("%.0f", e.With), f("%.0f", e.Without), f("%.0f", e.Backoff.Seconds()),
	}
}

// poolEventsHeader heads --pool-events: the step, then eventColumns, each
// event timed from the step's interval (negative in its warm-up).
var poolEventsHeader = strings.Join(append([]string{"conn", "rpc", "inflight", "rate rpc/s", "phase"}, eventColumns...), "\t")

// poolEvents writes every pool:auto step's decisions to w as tab-separated
// lines, a step at a time as each ends (so Ctrl-C keeps those written):
// loadgen.Options.PoolEvents.
type poolEvents struct {
	mu     sync.Mutex
	w      io.Writer
	header bool
	err    error // the first write error, reported at the end
}

func (p *poolEvents) write(h loadgen.PoolHistory) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return
	}
	var b strings.Builder
	if !p.header {
		b.WriteString(poolEventsHeader + "\n")
		p.header = true
	}
	start := h.Measured
	if start.IsZero() {
		start = h.Opened
	}
	sp := h.Record.Spec
	step := []string{fmt.Sprintf("%s:%d:%d", sp.ConnMode, sp.ConnsMin, sp.ConnsRequested), sp.RPC, strconv.Itoa(sp.Inflight), fmt.Sprintf("%.0f", sp.RateRPS)}
	for _, e := range h.Events {
		phase := "interval"
		switch {
		case h.Measured.IsZero() || e.At.Before(h.Measured):
			phase = "warm-up"
		case h.Record.DurationNS > 0 && e.At.Sub(h.Measured).Nanoseconds() > h.Record.DurationNS:
			phase = "after"
		}
		b.WriteString(strings.Join(append(append(step[:4:4], phase), eventRow(e, start)...), "\t") + "\n")
	}
	_, p.err = io.WriteString(p.w, b.String())
}

// Err is the first write error, naming the flag; nil if none.
func (p *poolEvents) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return fmt.Errorf("--pool-events: %w", p.err)
	}
	return nil
}

// checkPoolEvents refuses --pool-events (exit 2) when no planned Go
// client runs a pool:auto layout: the file would stay empty.
func (sf *sweepFlags) checkPoolEvents(planned []labClient) error {
	if sf.poolEvents == "" {
		return nil
	}
	for _, c := range planned {
		if c.lang != "go" {
			continue
		}
		for _, conn := range c.conns {
			if strings.HasPrefix(conn, "pool:auto") {
				return nil
			}
		}
	}
	return usage.Wrap(fmt.Errorf("--pool-events: no pool:auto layout in --conn for the go client: there would be no decisions to write"))
}
