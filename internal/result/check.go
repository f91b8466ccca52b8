// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/rpclab/rpclab/internal/stats"
)

// ThroughputSlack is how far a record's throughput may exceed what its own
// counts allow (successful RPCs over duration_ns) before Check calls it
// impossible: a merged worker record sums each worker's rate over its own
// interval while duration_ns is the longest, and other languages round
// their clocks differently, so the bound is loose; 1e308 is not within it.
const ThroughputSlack = 1.5

// The most a real run holds, as the record schemas bound it (a test keeps
// them equal): far above any run, so that a record past them is a
// corrupt or forged one, and importers refuse such figures naming the
// source's own field.
const (
	// MaxInflight bounds spec.inflight, max_outstanding and every
	// in-flight count.
	MaxInflight = 1 << 20
	// MaxConns bounds conns_requested, conns_min, conns_observed and pool
	// sizes.
	MaxConns = 1 << 20
	// MaxRateRPS bounds spec.rate_rps.
	MaxRateRPS = 1e9
	// MaxDurationNS bounds every duration and latency: 366 days.
	MaxDurationNS = 366 * 24 * 3600 * 1e9
	// MaxCPUs bounds a count of CPUs (host_cpus, cores).
	MaxCPUs = 1 << 16
)

// Check is what every producer calls before it writes a record (the
// worker merge, import, any new writer): the record must be one its
// readers can use. It rejects a non-finite or negative figure, anything
// the schema of its kind refuses (an unknown status code, a negative
// count), errors above requests, a histogram that does not decode, and a
// throughput its own counts and duration cannot give. Its errors wrap
// ErrImpossible and name the field.
func Check(r Kinded) error {
	if err := checkFinite(r); err != nil {
		return fmt.Errorf("result: %w: %w", ErrImpossible, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("result: %s record: %w", r.recordKind(), err)
	}
	if err := ValidateKind(r.recordKind(), b); err != nil {
		return fmt.Errorf("result: %w: %w", ErrImpossible, err)
	}
	if err := checkFigures(r); err != nil {
		return fmt.Errorf("result: %w: %w", ErrImpossible, err)
	}
	return nil
}

// checkFigures checks what the schema cannot: the record's own
// arithmetic. The reader runs it on every line after the schema.
func checkFigures(r Kinded) error {
	switch r := r.(type) {
	case *Record:
		return checkPing(r)
	case *BulkRecord:
		if r.Requests > 0 && r.Bytes < r.Requests*r.Spec.SizeBytes {
			return fmt.Errorf("bytes %d below requests %d x size_bytes %d", r.Bytes, r.Requests, r.Spec.SizeBytes)
		}
		if importedRate(r.Source, r.DurationNS) {
			return nil
		}
		return checkRate("throughput_bytes_per_s", r.ThroughputBytesPerS, r.Bytes, r.DurationNS)
	case *FlowRecord:
		if len(r.RPCNS) > r.RPCsRequested {
			return fmt.Errorf("%d rpc_ns values for %d rpcs_requested", len(r.RPCNS), r.RPCsRequested)
		}
	case *LiveRecord:
		return checkLive(r)
	}
	return nil
}

// checkPing checks a ping record's counts, histograms and rates, and each
// worker's share of them.
func checkPing(r *Record) error {
	errs, err := checkCounts("", r.Requests, r.Errors)
	if err != nil {
		return err
	}
	if r.LatencyClamped > r.Requests-errs {
		return fmt.Errorf("latency_clamped %d above the %d successful RPCs", r.LatencyClamped, r.Requests-errs)
	}
	if err := checkHistogram("histogram_hdr", r.HistogramHDR, r.Requests-errs); err != nil {
		return err
	}
	if err := checkHistogram("schedule_lag_hdr", r.ScheduleLagHDR, -1); err != nil {
		return err
	}
	if err := checkLatency("latency", r.Latency); err != nil {
		return err
	}
	if r.OldestInFlightNS != 0 && (r.InFlightAtEnd == nil || *r.InFlightAtEnd <= 0) {
		return fmt.Errorf("oldest_in_flight_ns %d with no RPC in flight at the end (in_flight_at_end)", r.OldestInFlightNS)
	}
	if !importedRate(r.Source, r.DurationNS) {
		if err := checkRate("throughput_rps", r.ThroughputRPS, r.Requests-errs, r.DurationNS); err != nil {
			return err
		}
	}
	if err := checkPoolSizes(r); err != nil {
		return err
	}
	for i, w := range r.Workers {
		name := fmt.Sprintf("workers[%d] (%s)", i, w.Addr)
		werrs, err := checkCounts(name+".", w.Requests, w.Errors)
		if err != nil {
			return err
		}
		if err := checkHistogram(name+".histogram_hdr", w.HistogramHDR, w.Requests-werrs); err != nil {
			return err
		}
		if err := checkLatency(name+".latency", w.Latency); err != nil {
			return err
		}
		if err := checkRate(name+".throughput_rps", w.ThroughputRPS, w.Requests-werrs, w.DurationNS); err != nil {
			return err
		}
	}
	return nil
}

// checkCounts returns the sum of errors, refusing one above requests.
func checkCounts(prefix string, requests int64, errors map[string]int64) (int64, error) {
	var sum int64
	for code, n := range errors {
		if n < 0 || sum > math.MaxInt64-n {
			return 0, fmt.Errorf("%serrors[%s] %d is out of range", prefix, code, n)
		}
		sum += n
	}
	if sum > requests {
		return 0, fmt.Errorf("%serrors %d above %srequests %d (requests counts every RPC, errors included)", prefix, sum, prefix, requests)
	}
	return sum, nil
}

// checkHistogram refuses a histogram that does not decode, or (when
// successes is not negative) one holding more values than successes.
func checkHistogram(name, hdr string, successes int64) error {
	if hdr == "" {
		return nil
	}
	h, err := stats.DecodeHistogram(hdr)
	if err != nil {
		return fmt.Errorf("%s does not decode: %w", name, err)
	}
	if successes >= 0 && h.TotalCount() > successes {
		return fmt.Errorf("%s holds %d latencies, more than the %d successful RPCs", name, h.TotalCount(), successes)
	}
	return nil
}

// checkLatency refuses quantiles out of order (ignoring those a source
// left at 0).
func checkLatency(name string, l stats.Latency) error {
	q := []struct {
		name string
		v    int64
	}{{"min_ns", l.MinNS}, {"p50_ns", l.P50NS}, {"p90_ns", l.P90NS}, {"p99_ns", l.P99NS}, {"p999_ns", l.P999NS}, {"p100_ns", l.P100NS}}
	prev := 0
	for i := 1; i < len(q); i++ {
		if q[i].v == 0 {
			continue
		}
		if q[prev].v > q[i].v {
			return fmt.Errorf("%s.%s %d above %s.%s %d", name, q[prev].name, q[prev].v, name, q[i].name, q[i].v)
		}
		prev = i
	}
	return nil
}

// importedRate reports a record imported with a rate but without its
// counts (a post's figures: duration_ns 0), whose rate no arithmetic can
// check; every other record states both.
func importedRate(source string, durationNS int64) bool { return source != "" && durationNS == 0 }

// checkRate refuses a rate above what count over durationNS gives (with
// ThroughputSlack), or any rate over no time.
func checkRate(name string, rate float64, count, durationNS int64) error {
	if rate == 0 {
		return nil
	}
	if durationNS <= 0 {
		return fmt.Errorf("%s %g over duration_ns %d", name, rate, durationNS)
	}
	most := float64(count) / (float64(durationNS) / 1e9)
	if rate > ThroughputSlack*most+1 {
		return fmt.Errorf("%s %g is impossible: %d in duration_ns %d is %.4g per second", name, rate, count, durationNS, most)
	}
	return nil
}

// checkFinite refuses NaN and infinite floats, which JSON cannot carry.
func checkFinite(r Kinded) error {
	var fs []struct {
		name string
		v    float64
	}
	add := func(name string, v float64) {
		fs = append(fs, struct {
			name string
			v    float64
		}{name, v})
	}
	switch r := r.(type) {
	case *Record:
		add("throughput_rps", r.ThroughputRPS)
		add("latency.mean_ns", r.Latency.MeanNS)
		add("client_cpu_ns_per_rpc", r.ClientCPUNSPerRPC)
		add("spec.rate_rps", r.Spec.RateRPS)
		if r.ServerCPU != nil {
			add("server_cpu.cpu_ns_per_rpc", r.ServerCPU.CPUNSPerRPC)
			add("server_cpu.busy", r.ServerCPU.Busy)
		}
		if r.ScheduleLag != nil {
			add("schedule_lag.mean_ns", r.ScheduleLag.MeanNS)
		}
		for i, w := range r.Workers {
			p := fmt.Sprintf("workers[%d].", i)
			add(p+"rate_rps", w.RateRPS)
			add(p+"throughput_rps", w.ThroughputRPS)
			add(p+"latency.mean_ns", w.Latency.MeanNS)
			add(p+"cpu_busy", w.CPUBusy)
			add(p+"histogram_rel_error", w.HistogramRelError)
		}
	case *BulkRecord:
		add("throughput_bytes_per_s", r.ThroughputBytesPerS)
		add("client_cpu_s_per_gib", r.ClientCPUSPerGiB)
		add("server_cpu_s_per_gib", r.ServerCPUSPerGiB)
		add("server_alloc_bytes_per_mib", r.ServerAllocBytesPerMiB)
		add("server_allocs_per_request", r.ServerAllocsPerRequest)
		add("client_alloc_bytes_per_mib", r.ClientAllocBytesPerMiB)
		add("client_allocs_per_request", r.ClientAllocsPerRequest)
	}
	for _, f := range fs {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s is %v, not a number a record can hold", f.name, f.v)
		}
	}
	return nil
}

// checkPoolSizes: pool_sizes belong to a "pool-auto" step, in time order,
// each size within the step's conns_min..conns_requested.
func checkPoolSizes(r *Record) error {
	if r.Spec.ConnMode == "pool-auto" && (r.Spec.ConnsMin < 1 || r.Spec.ConnsMin > r.Spec.ConnsRequested) {
		return fmt.Errorf("spec.conns_min %d outside 1..conns_requested %d of a pool-auto step", r.Spec.ConnsMin, r.Spec.ConnsRequested)
	}
	if len(r.PoolSizes) == 0 {
		return nil
	}
	if r.Spec.ConnMode != "pool-auto" {
		return fmt.Errorf("pool_sizes in a %q step (only pool-auto has them)", r.Spec.ConnMode)
	}
	var last int64
	for i, p := range r.PoolSizes {
		if p.TNS < last {
			return fmt.Errorf("pool_sizes[%d].t_ns %d before the previous %d", i, p.TNS, last)
		}
		last = p.TNS
		if p.Size < r.Spec.ConnsMin || p.Size > r.Spec.ConnsRequested {
			return fmt.Errorf("pool_sizes[%d].size %d outside conns_min %d..conns_requested %d", i, p.Size, r.Spec.ConnsMin, r.Spec.ConnsRequested)
		}
	}
	return nil
}
