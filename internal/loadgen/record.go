// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/pool"
)

// MaxErrorShare is the share of a step's RPCs that may fail while the step
// stays "ok": above it the step is "failed" (its figures are kept), so it
// enters no verdict as a clean step. 1%: a step whose server died, or that
// a netem rate starved, loses far more; a healthy step loses none.
const MaxErrorShare = 0.01

// NewRecord is the record of a step before it runs: the step's spec (a
// closed-loop one; the open loop adds its settings), this process's
// environment as a Go client, status ok and nothing counted. It is the one
// builder of a ping record: every step's frame starts from it, and so does
// the record a session keeps for a step cut off before it measured
// anything (lab).
func NewRecord(spec *Spec, step Step, o Options) *result.Record {
	return &result.Record{
		SchemaVersion: result.SchemaVersion,
		Kind:          "ping",
		Status:        result.StatusOK,
		StartedAt:     time.Now().UTC(),
		Spec: result.Spec{
			Target:         spec.Target,
			Service:        spec.Service.RecordName(),
			RPC:            step.RPC,
			ConnMode:       string(step.Conn.Kind),
			ConnsRequested: step.Conn.Conns(step.Inflight),
			ConnsMin:       step.Conn.Min,
			Pick:           step.Conn.PickName(),
			Inflight:       step.Inflight,
			PayloadBytes:   spec.PayloadBytes,
			WarmupNS:       int64(spec.StepWarmup(step, o.AdaptiveRule)),
			IntervalNS:     int64(spec.Interval),
			LoadModel:      "closed",
			Server:         spec.Server,
		},
		Env:           result.GoEnv(grpc.Version, o.ClientCPUs),
		Errors:        map[string]int64{},
		ConnsObserved: -1,
	}
}

func failed(rec *result.Record, err error) *result.Record {
	rec.Status = result.StatusFailed
	rec.Error = err.Error()
	return rec
}

func fill(rec *result.Record, sum *stats.Summary, elapsed, cpu time.Duration) {
	rec.Requests = sum.Total()
	rec.Errors = sum.Errors()
	rec.DurationNS = int64(elapsed)
	if elapsed > 0 {
		rec.ThroughputRPS = float64(sum.OK()) / elapsed.Seconds()
	}
	rec.Latency, rec.LatencyClamped = stats.Quantiles(sum.Hist), sum.Clamped
	rec.ErrorSample = sum.ErrorSample()
	if h, err := stats.EncodeHistogram(sum.Hist); err == nil {
		rec.HistogramHDR = h
	}
	rec.ClientCPUNS = int64(cpu)
	if rec.Requests > 0 {
		rec.ClientCPUNSPerRPC = float64(cpu) / float64(rec.Requests)
	}
	if sum.OK() == 0 {
		rec.Status = result.StatusFailed
		switch {
		case rec.Requests == 0:
			rec.Error = "no RPC completed in the interval"
		default:
			rec.Error = everyFailed(rec)
		}
	}
}

// everyFailed says that every RPC of rec failed, with its error sample:
// "every RPC failed (5542): Unimplemented: unknown method Foo"; when they
// failed with several codes, the counts come first: "every RPC failed
// (5542: Unavailable 5000, DeadlineExceeded 542): Unavailable: ...".
func everyFailed(rec *result.Record) string {
	counts := fmt.Sprint(rec.Requests)
	if len(rec.Errors) > 1 || rec.ErrorSample == "" {
		counts += ": " + errorCounts(rec.Errors)
	}
	if rec.ErrorSample == "" {
		return "every RPC failed (" + counts + ")"
	}
	return "every RPC failed (" + counts + "): " + rec.ErrorSample
}

// sampleSuffix is "; first: <code>: <message>" when rec has an error sample.
func sampleSuffix(rec *result.Record) string {
	if rec.ErrorSample == "" {
		return ""
	}
	return "; first: " + rec.ErrorSample
}

// errorCounts lists failed RPCs by code, most first.
func errorCounts(errs map[string]int64) string {
	codes := slices.Collect(maps.Keys(errs))
	slices.SortFunc(codes, func(a, b string) int {
		if c := cmp.Compare(errs[b], errs[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s %d", c, errs[c])
	}
	return strings.Join(parts, ", ")
}

// PoolSizes is the record's pool_sizes: from an adaptive pool's decision
// history (pool.Stats().Events, oldest first), the size it had at start
// (that of the last resize before it, else minConns) at t_ns 0, then each
// resize up to end, at most result.MaxPoolSizes entries (the earliest).
func PoolSizes(events []pool.Event, minConns int, start, end time.Time) []result.PoolSize {
	out := []result.PoolSize{{TNS: 0, Size: minConns, Reason: "start"}}
	for _, e := range events {
		if e.From == e.To {
			continue
		}
		switch {
		case !e.At.After(start):
			out[0].Size = e.To
		case e.At.After(end) || len(out) >= result.MaxPoolSizes:
			return out
		default:
			out = append(out, result.PoolSize{TNS: int64(e.At.Sub(start)), Size: e.To, Reason: e.Reason})
		}
	}
	return out
}
