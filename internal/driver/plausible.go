// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package driver

import (
	"fmt"
	"math"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
)

// plausible checks what a worker reported for one mark before the driver
// merges it: a worker is another program (any language's, or a stranger's
// on the network), so its figures are input. Elapsed and CPU times must be
// finite and not negative, elapsed at most the driver's own time from its
// first mark to the last (wall) plus a second; counts not negative, status
// codes gRPC's. A worker that fails is lost for the step, its error
// naming the figure.
func plausible(p *part, wall time.Duration) error {
	st := p.stats
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s reported impossible figures: %s", ErrImpossible, p.r.Addr, fmt.Sprintf(format, args...))
	}
	limit := (wall + time.Second).Seconds()
	for _, f := range []struct {
		name string
		v    float64
		max  float64
	}{
		{"time_elapsed", st.GetTimeElapsed(), limit},
		{"time_user", st.GetTimeUser(), math.MaxInt64 / 1e9},
		{"time_system", st.GetTimeSystem(), math.MaxInt64 / 1e9},
		{"latencies.min_seen", st.GetLatencies().GetMinSeen(), math.MaxFloat64},
		{"latencies.max_seen", st.GetLatencies().GetMaxSeen(), math.MaxFloat64},
	} {
		if !(f.v >= 0 && f.v <= f.max) { // NaN fails both
			return bad("%s %g (want 0 to %g)", f.name, f.v, f.max)
		}
	}
	for _, r := range st.GetRequestResults() {
		if r.GetStatusCode() < 0 || r.GetStatusCode() > int32(codes.Unauthenticated) {
			return bad("status code %d is not a gRPC status code", r.GetStatusCode())
		}
		if r.GetCount() < 0 {
			return bad("status %s count %d", codes.Code(r.GetStatusCode()), r.GetCount())
		}
	}
	if d := p.detail; d != nil {
		if d.GetConnsObserved() < -1 {
			return bad("conns_observed %d", d.GetConnsObserved())
		}
		for code, n := range d.GetRequestsByCode() {
			if !knownCode(code) || n < 0 {
				return bad("status %q count %d", code, n)
			}
		}
		if hdr := d.GetHistogramHdr(); hdr != "" {
			if _, err := stats.DecodeHistogram(hdr); err != nil {
				return bad("histogram_hdr: %v", err)
			}
		}
	}
	return nil
}

// knownCode reports whether name is a gRPC status code's name ("OK",
// "Unavailable").
func knownCode(name string) bool {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if c.String() == name {
			return true
		}
	}
	return false
}

// checked returns rec when result.Check accepts it, else a failed record
// of the same step without figures, its error saying why: a step's
// impossible figures must never make the records file unusable.
func checked(rec *result.Record) *result.Record {
	err := result.Check(rec)
	if err == nil {
		return rec
	}
	out := &result.Record{
		SchemaVersion: rec.SchemaVersion, Kind: rec.Kind, Status: result.StatusFailed,
		Error:     fmt.Sprintf("the workers' merged figures are impossible, none kept: %v", err),
		StartedAt: rec.StartedAt, Spec: rec.Spec, Env: rec.Env, Errors: map[string]int64{},
		ConnsObserved: -1, WorkersStartNS: max(rec.WorkersStartNS, 0),
	}
	for _, w := range rec.Workers {
		out.Workers = append(out.Workers, result.WorkerShare{Addr: w.Addr, Impl: w.Impl, Status: w.Status, Error: w.Error,
			Cores: max(w.Cores, 0), Inflight: w.Inflight, RateRPS: w.RateRPS, ConnsObserved: -1})
	}
	return out
}
