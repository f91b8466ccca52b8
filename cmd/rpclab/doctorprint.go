// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rpclab/rpclab/internal/doctor"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// doctorStep prints a step of the study as it ends.
func doctorStep(stderr io.Writer, r *result.Record) {
	settled := ""
	if r.Spec.ConnMode == verdict.AutoPoolMode {
		settled = fmt.Sprintf("  (after %v of warm-up to settle)", time.Duration(r.Spec.WarmupNS))
	}
	fmt.Fprintf(stderr, "rpclab doctor: %-7s in-flight %-3d %8.0f req/s  p99 %.1f µs  %s%s\n",
		verdict.ConnLabel(r), r.Spec.Inflight, r.ThroughputRPS, float64(r.Latency.P99NS)/1e3, r.Status, settled)
}

// doctorStart says, before the study, what it studies and for how long,
// warns when the host is already busy (as sweep does; over every CPU when
// the target is on this host, since its server's CPUs count too), and says
// once when the target's process on this host cannot be read.
func doctorStart(ctx context.Context, stderr io.Writer, o *doctor.Options, client string) {
	local, err := doctor.FindLocalServer(o.Target)
	if w := warnBusyHostFor(ctx, local != nil || err != nil); w != "" {
		fmt.Fprintln(stderr, w)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rpclab doctor: %v: its CPU is unknown, and the verdict will not read it as idle\n", err)
	}
	fmt.Fprintf(stderr, "rpclab doctor: studying %s for about %v with the %s client\n", o.Target, o.Budget, client)
	if o.Adaptive {
		r := o.AdaptiveRule()
		most := 2 * (r.SettleTime(o.MaxInflight) + r.SettleWait() + o.Interval)
		fmt.Fprintf(stderr, "rpclab doctor: then the adaptive pool, up to %v more (--adaptive=false leaves it out): each of its two steps first warms up until pool:auto:%d:%d can grow to the connections its in-flight count can use, up to %v (%v, then %v a connection: a %v trial + %v cooldown + %v decision), then on while a trial is under way, at most %v\n",
			most.Round(time.Second), r.Min, r.Max, r.SettleTime(o.MaxInflight), r.Interval, r.TrialTime()+r.Cooldown+r.Interval, r.TrialTime(), r.Cooldown, r.Interval, r.SettleWait())
	}
}
