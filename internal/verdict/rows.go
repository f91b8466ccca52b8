// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
)

// ConnLabel names a record's connection layout as --conn spells it
// ("shared", "per-worker", "pool:4", "pool:4:least-loaded"): result's one
// formatter, which loadgen's ConnMode.String uses too.
func ConnLabel(r *result.Record) string { return r.Spec.ConnLabel() }

// TargetLabel names what a record measured against. A server that rpclab
// started itself listens on a random loopback port each run, so its records
// are labelled by the server's implementation instead ("rpclab go server"),
// and runs of the same setup compare.
func TargetLabel(r *result.Record) string {
	if r.Spec.Server != "" {
		return "rpclab " + r.Spec.Server + " server"
	}
	return r.Spec.Target
}

// IsOpen says whether r is an open-loop step (rpclab sweep --rps).
func IsOpen(r *result.Record) bool { return r.Spec.LoadModel == "open" }

// seriesKey groups records that form one in-flight series: same client,
// target, layout, service, method, RPC kind and payload.
func seriesKey(r *result.Record) string {
	return strings.Join([]string{r.Env.Language, r.Spec.Target, ConnLabel(r), Service(r), r.Spec.Call, r.Spec.RPC,
		strconv.Itoa(r.Spec.PayloadBytes), r.Spec.LoadModel}, "|")
}

// Row is one record with the figures derived from its series.
type Row struct {
	Rec *result.Record
	// IdealRPS is the series' throughput at in-flight 1 times this record's
	// in-flight count (YDB's "theoretical" line); 0 when the series has no
	// successful step at in-flight 1, and for open-loop steps.
	IdealRPS float64
	// Efficiency is ThroughputRPS / IdealRPS (0 when IdealRPS is 0).
	Efficiency float64
}

// Rows derives the ideal line and efficiency for every record, keeping the
// records' order.
func Rows(recs []result.Record) []Row {
	base := map[string]float64{}
	for i := range recs {
		r := &recs[i]
		if r.Spec.Inflight == 1 && clean(r) && !IsOpen(r) {
			base[seriesKey(r)] = r.ThroughputRPS
		}
	}
	rows := make([]Row, len(recs))
	for i := range recs {
		r := &recs[i]
		row := Row{Rec: r}
		if b := base[seriesKey(r)]; b > 0 {
			row.IdealRPS = b * float64(r.Spec.Inflight)
			row.Efficiency = r.ThroughputRPS / row.IdealRPS
		}
		rows[i] = row
	}
	return rows
}

// Base picks, among the steps of one run (rows, in the order drawn), the
// step its ideal line and speed-up start from: the in-flight-1 step of the
// shared layout, else the first in-flight-1 step with throughput; nil when
// none has.
func Base(rows []*Row) *Row {
	var base *Row
	for _, r := range rows {
		if r.Rec.Spec.Inflight != 1 || r.Rec.ThroughputRPS <= 0 {
			continue
		}
		if base == nil || (ConnLabel(r.Rec) == "shared" && ConnLabel(base.Rec) != "shared") {
			base = r
		}
	}
	return base
}

// ClientBusy is the share of the client's CPUs (those it was pinned to, else
// the host's; on a sweep on workers, theirs together) that its process
// kept busy over r's interval; 0 when unknown.
func ClientBusy(r *result.Record) float64 {
	if r == nil || r.DurationNS <= 0 || r.ClientCPUNS <= 0 {
		return 0
	}
	return float64(r.ClientCPUNS) / float64(r.DurationNS) / float64(clientCPUs(r))
}

// Service is the ping service r drove: its spec.service, "benchmark" when
// absent (the default).
func Service(r *result.Record) string {
	if r.Spec.Service == "" {
		return "benchmark"
	}
	return r.Spec.Service
}

// ServerBusy is the share of the server's CPUs that its process kept busy
// over r's interval (server_cpu.busy); ok is false when r does not carry
// it (a server without rpclab.v1.UsageService, an imported record).
func ServerBusy(r *result.Record) (busy float64, ok bool) {
	if r == nil || r.ServerCPU == nil {
		return 0, false
	}
	return r.ServerCPU.Busy, true
}

// clientCPUs counts the client's CPUs: on a sweep on workers, the cores
// of the workers whose figures the record holds (env is the driver's).
func clientCPUs(r *result.Record) int {
	if len(r.Workers) > 0 {
		n := 0
		for _, w := range r.Workers {
			if w.Status == "ok" {
				n += w.Cores
			}
		}
		return max(n, 1)
	}
	if n := len(r.Env.ClientCPUs); n > 0 {
		return n
	}
	return max(r.Env.HostCPUs, 1)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
