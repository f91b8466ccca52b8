// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// CSVHeader is the first line CSV writes; columns carry their units.
var CSVHeader = []string{
	"language", "grpc_impl", "target", "conn_mode", "conns_requested", "rpc", "inflight", "payload_bytes",
	"load_model", "status", "requests", "errors", "duration_ns", "throughput_rps", "ideal_rps", "efficiency",
	"min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p100_ns", "conns_observed",
	"client_cpu_ns", "client_cpu_ns_per_rpc", "other_cpu_share", "error",
}

// CSV writes one row per record, with the derived ideal and efficiency,
// and other_cpu_share: the share of the step's CPUs other work took
// (verdict.OtherShare, 0 to 1; empty when the record does not carry the
// host's CPU).
func CSV(w io.Writer, recs []result.Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	f64 := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, row := range verdict.Rows(recs) {
		r := row.Rec
		var nerr int64
		for _, n := range r.Errors {
			nerr += n
		}
		other := ""
		if share, ok := verdict.OtherShare(r); ok {
			other = f64(share)
		}
		if err := cw.Write([]string{
			r.Env.Language, r.Env.GRPCImpl, r.Spec.Target, verdict.ConnLabel(r), strconv.Itoa(r.Spec.ConnsRequested), r.Spec.RPC,
			strconv.Itoa(r.Spec.Inflight), strconv.Itoa(r.Spec.PayloadBytes), r.Spec.LoadModel, r.Status,
			i64(r.Requests), i64(nerr), i64(r.DurationNS), f64(r.ThroughputRPS), f64(row.IdealRPS), f64(row.Efficiency),
			i64(r.Latency.MinNS), f64(r.Latency.MeanNS), i64(r.Latency.P50NS), i64(r.Latency.P90NS), i64(r.Latency.P99NS),
			i64(r.Latency.P999NS), i64(r.Latency.P100NS), strconv.Itoa(r.ConnsObserved), i64(r.ClientCPUNS),
			f64(r.ClientCPUNSPerRPC), other, r.Error,
		}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
