// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// impossible lists records no run can produce, each from sample by one
// change, with what the error must name.
var impossible = []struct {
	name   string
	change func(r *Record)
	want   string
}{
	{"errors above requests", func(r *Record) { r.Errors = map[string]int64{"Unavailable": 10 * r.Requests} }, "errors 10000 above requests 1000"},
	{"worker errors above its requests", func(r *Record) {
		r.Workers = []WorkerShare{{Addr: "w1", Impl: "rpclab", Status: "ok", Requests: 5, Errors: map[string]int64{"Internal": 6}, DurationNS: 3e9, ConnsObserved: 1}}
	}, "workers[0] (w1).errors 6 above workers[0] (w1).requests 5"},
	{"histogram that does not decode", func(r *Record) { r.HistogramHDR = "HISTFAAAAB94nJNpmSzMwMBgAgADBwDJ" }, "histogram_hdr does not decode"},
	{"histogram with more values than successes", func(r *Record) { r.Requests, r.Errors, r.ThroughputRPS = 5, map[string]int64{}, 1 }, "holds 10 latencies, more than the 5 successful"},
	{"throughput 1e308", func(r *Record) { r.ThroughputRPS = 1e308 }, "throughput_rps 1e+308 is impossible"},
	{"throughput 3x what its counts give", func(r *Record) { r.ThroughputRPS = 1000 }, "throughput_rps 1000 is impossible: 997 in duration_ns 3000000000 is 332.3 per second"},
	{"throughput over no time", func(r *Record) { r.DurationNS = 0 }, "over duration_ns 0"},
	{"NaN throughput", func(r *Record) { r.ThroughputRPS = math.NaN() }, "throughput_rps is NaN"},
	{"infinite worker cpu", func(r *Record) {
		r.Workers = []WorkerShare{{Addr: "w1", Impl: "rpclab", Status: "ok", CPUBusy: math.Inf(1), ConnsObserved: 1}}
	}, "workers[0].cpu_busy is +Inf"},
	{"negative requests", func(r *Record) { r.Requests = -1 }, "requests"},
	{"negative duration", func(r *Record) { r.DurationNS = math.MinInt64 }, "duration_ns"},
	{"unknown status code", func(r *Record) { r.Errors = map[string]int64{"Code(999)": 1} }, "Code(999)"},
	{"quantiles out of order", func(r *Record) { r.Latency.P99NS = 1e9 }, "latency.p99_ns 1000000000 above latency.p999_ns 50"},
	{"clamped above successes", func(r *Record) { r.LatencyClamped = 998 }, "latency_clamped 998"},
	{"pool sizes of a fixed layout", func(r *Record) { r.PoolSizes = []PoolSize{{0, 1, "start"}} }, "pool_sizes in a"},
	{"pool size above its max", func(r *Record) { autoPool(r); r.PoolSizes = []PoolSize{{0, 1, "start"}, {5, 9, "grow"}} }, "pool_sizes[1].size 9 outside"},
	{"pool sizes out of order", func(r *Record) { autoPool(r); r.PoolSizes = []PoolSize{{7, 1, "start"}, {5, 2, "grow"}} }, "pool_sizes[1].t_ns 5 before"},
	{"pool-auto without its min", func(r *Record) { autoPool(r); r.Spec.ConnsMin = 0 }, "spec.conns_min 0"},
	{"pool sizes past their bound", func(r *Record) {
		autoPool(r)
		r.PoolSizes = make([]PoolSize, MaxPoolSizes+1)
		for i := range r.PoolSizes {
			r.PoolSizes[i] = PoolSize{int64(i), 1, "grow"}
		}
	}, "pool_sizes"},
	{"oldest in flight with none in flight", func(r *Record) { r.OldestInFlightNS = 4e9 }, "oldest_in_flight_ns 4000000000 with no RPC in flight"},
}

// autoPool makes r a step of pool:auto:1:8.
func autoPool(r *Record) {
	r.Spec.ConnMode, r.Spec.ConnsMin, r.Spec.ConnsRequested, r.Spec.Pick = "pool-auto", 1, 8, ""
}

// TestCheckAcceptsPoolSizes: a pool:auto step with the sizes its pool
// chose passes Check, and labels as --conn spells it.
func TestCheckAcceptsPoolSizes(t *testing.T) {
	r := sample(4)
	autoPool(r)
	r.PoolSizes = []PoolSize{{0, 1, "start"}, {2e9, 2, "a connection is the limit and CPU is free"}, {2e9, 1, "trial connection given back: no gain"}}
	if err := Check(r); err != nil {
		t.Fatalf("Check: got %v, want nil", err)
	}
	if got, want := r.Spec.ConnLabel(), "pool:auto:1:8"; got != want {
		t.Errorf("label: got %q, want %q", got, want)
	}
}

// TestStalledRecordReads: a stalled step's record (status stalled, the RPCs
// in flight at its end and the oldest one's age) passes Check and the
// schema, and reads back with both figures.
func TestStalledRecordReads(t *testing.T) {
	r := sample(4)
	n := int64(4)
	r.Status, r.Error, r.InFlightAtEnd, r.OldestInFlightNS = StatusStalled, "the server stalled", &n, 4e9
	if err := Check(r); err != nil {
		t.Fatalf("Check: got %v, want nil", err)
	}
	set, err := ReadAll(t.Context(), bytes.NewReader(encode(t, r)))
	if err != nil {
		t.Fatalf("ReadAll: got %v, want nil", err)
	}
	got := set.Ping[0]
	if got.Status != StatusStalled || got.InFlightAtEnd == nil || *got.InFlightAtEnd != 4 || got.OldestInFlightNS != 4e9 {
		t.Errorf("got status %q, in flight %v, oldest %d; want stalled, 4, 4000000000", got.Status, got.InFlightAtEnd, got.OldestInFlightNS)
	}
}

// TestCheckRefusesImpossible: Check refuses each impossible record with an
// error wrapping ErrImpossible that names the figure, and accepts sample.
func TestCheckRefusesImpossible(t *testing.T) {
	if err := Check(sample(4)); err != nil {
		t.Fatalf("Check(sample): got %v, want nil", err)
	}
	for _, tc := range impossible {
		t.Run(tc.name, func(t *testing.T) {
			r := sample(4)
			tc.change(r)
			err := Check(r)
			if !errors.Is(err, ErrImpossible) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error wrapping ErrImpossible naming %q", err, tc.want)
			}
		})
	}
}

// TestReadRefusesImpossible: the reader (validate, report) refuses the
// same records written as JSON (those JSON can hold), naming the file and
// the line.
func TestReadRefusesImpossible(t *testing.T) {
	for _, tc := range impossible {
		r := sample(4)
		tc.change(r)
		if checkFinite(r) != nil {
			continue // no JSON holds NaN: Check is the producers' guard
		}
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			buf.Write(encode(t, sample(1)))
			if err := writeUnchecked(&buf, r); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "r.jsonl")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			set, err := ReadAllFile(t.Context(), path)
			var le *LineError
			if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want a *LineError naming %s line 2", err, path)
			}
			if got := len(set.Ping); got != 1 {
				t.Errorf("got %d records, want 1 (the line before)", got)
			}
		})
	}
}

// writeUnchecked writes r as one line without Check, as a buggy producer
// or another tool would.
func writeUnchecked(buf *bytes.Buffer, r *Record) error {
	return NewWriter(buf).Write(r)
}

// TestCheckOtherKinds: bulk and flow records are checked too.
func TestCheckOtherKinds(t *testing.T) {
	set, err := ReadAllFile(t.Context(), "testdata/flow.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	flow := set.Flow[0]
	flow.RPCsRequested = len(flow.RPCNS) - 1
	tests := []struct {
		name string
		rec  Kinded
		want string
	}{
		{"bulk NaN rate", &BulkRecord{SchemaVersion: 1, Kind: KindBulk, ThroughputBytesPerS: math.NaN()}, "throughput_bytes_per_s is NaN"},
		{"flow more RPCs than asked", &flow, "rpc_ns values for"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(tc.rec); !errors.Is(err, ErrImpossible) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// TestCheckAcceptsCommitted: every committed record of every kind passes
// Check, so producers calling it refuse nothing real.
func TestCheckAcceptsCommitted(t *testing.T) {
	for _, f := range committedFiles(t) {
		set, err := ReadAllFile(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range set.Ping {
			if err := Check(&set.Ping[i]); err != nil {
				t.Errorf("%s ping %d: got %v, want nil", f, i, err)
			}
		}
		for i := range set.Bulk {
			if err := Check(&set.Bulk[i]); err != nil {
				t.Errorf("%s bulk %d: got %v, want nil", f, i, err)
			}
		}
		for i := range set.Flow {
			if err := Check(&set.Flow[i]); err != nil {
				t.Errorf("%s flow %d: got %v, want nil", f, i, err)
			}
		}
	}
}

// TestCheckAllFile: validate's reader checks every line as ReadAllFile
// does and counts each kind, but keeps no record, so a large records
// file is checked in the memory of its longest line.
func TestCheckAllFile(t *testing.T) {
	for _, f := range committedFiles(t) {
		want, err := ReadAllFile(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := CheckAllFile(t.Context(), f)
		if err != nil {
			t.Fatalf("%s: got %v, want nil", f, err)
		}
		if got.Len() != want.Len() || len(got.Ping)+len(got.Bulk)+len(got.Flow) != 0 {
			t.Errorf("%s: got %d records counted, %d kept; want %d counted, none kept", f, got.Len(), len(got.Ping)+len(got.Bulk)+len(got.Flow), want.Len())
		}
		for _, k := range Kinds {
			if got.Count(k) != want.Count(k) {
				t.Errorf("%s: got %d %s records, want %d", f, got.Count(k), k, want.Count(k))
			}
		}
	}
	// A bad line is found with its number, as ReadAllFile finds it.
	r := sample(4)
	r.Errors = map[string]int64{"Unavailable": 5000}
	var buf bytes.Buffer
	buf.Write(encode(t, sample(1)))
	if err := writeUnchecked(&buf, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := CheckAllFile(t.Context(), path)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, ErrImpossible) {
		t.Errorf("got %v, want line 2 wrapping ErrImpossible", err)
	}
}
