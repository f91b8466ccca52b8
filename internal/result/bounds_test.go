// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/schema"
)

// TestSchemaBoundsMatchTheConstants: the schema's maxima are the Max
// constants importers check their sources against.
func TestSchemaBoundsMatchTheConstants(t *testing.T) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema.Result, &s); err != nil {
		t.Fatal(err)
	}
	var spec, env struct {
		Properties map[string]struct {
			Maximum *float64 `json:"maximum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(s.Properties["spec"], &spec); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(s.Properties["env"], &env); err != nil {
		t.Fatal(err)
	}
	var duration struct {
		Maximum *float64 `json:"maximum"`
	}
	if err := json.Unmarshal(s.Properties["duration_ns"], &duration); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  *float64
		want float64
	}{
		{"spec.inflight", spec.Properties["inflight"].Maximum, MaxInflight},
		{"spec.max_outstanding", spec.Properties["max_outstanding"].Maximum, MaxInflight},
		{"spec.conns_requested", spec.Properties["conns_requested"].Maximum, MaxConns},
		{"spec.rate_rps", spec.Properties["rate_rps"].Maximum, MaxRateRPS},
		{"spec.warmup_ns", spec.Properties["warmup_ns"].Maximum, MaxDurationNS},
		{"env.host_cpus", env.Properties["host_cpus"].Maximum, MaxCPUs},
		{"duration_ns", duration.Maximum, MaxDurationNS},
	} {
		if tc.got == nil || *tc.got != tc.want {
			t.Errorf("%s: schema maximum %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestReaderRefusesPastTheBounds: a record at each bound is read; one past
// it is a line error naming the field and the value, from ReadAll (rpclab
// report) and CheckAllFile's reader (rpclab validate) alike.
func TestReaderRefusesPastTheBounds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(r *Record, past bool)
		field string
	}{
		{"in-flight", func(r *Record, past bool) { r.Spec.Inflight = MaxInflight + b2i(past) }, "/spec/inflight"},
		{"connections", func(r *Record, past bool) { r.Spec.ConnsRequested = MaxConns + b2i(past) }, "/spec/conns_requested"},
		{"connections observed", func(r *Record, past bool) { r.ConnsObserved = MaxConns + b2i(past) }, "/conns_observed"},
		{"rate", func(r *Record, past bool) {
			r.Spec.LoadModel, r.Spec.RateRPS, r.Spec.Arrival = "open", MaxRateRPS*(1+float64(b2i(past))), "constant"
		}, "/spec/rate_rps"},
		{"warm-up", func(r *Record, past bool) { r.Spec.WarmupNS = MaxDurationNS + int64(b2i(past)) }, "/spec/warmup_ns"},
		{"host CPUs", func(r *Record, past bool) { r.Env.HostCPUs = MaxCPUs + b2i(past) }, "/env/host_cpus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := sample(4)
			tc.set(at, false)
			if _, err := ReadAll(context.Background(), bytes.NewReader(encodeUnchecked(t, at))); err != nil {
				t.Errorf("at the bound: %v, want it read", err)
			}
			past := sample(4)
			tc.set(past, true)
			_, err := ReadAll(context.Background(), bytes.NewReader(encodeUnchecked(t, past)))
			if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "maximum") {
				t.Errorf("past the bound: %v, want line 1 naming %s and its maximum", err, tc.field)
			}
		})
	}
	// An in-flight of 1e18, as a forged record may hold.
	b := encodeUnchecked(t, sample(4))
	b = bytes.Replace(b, []byte(`"inflight":4`), []byte(`"inflight":`+strconv.FormatInt(1e18, 10)), 1)
	if _, err := ReadAll(context.Background(), bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "/spec/inflight") {
		t.Errorf("in-flight 1e18: %v, want an error naming /spec/inflight", err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// encodeUnchecked is one record's line as JSON, without Check (the
// writer would refuse what the test wants the reader to see).
func encodeUnchecked(t *testing.T, r *Record) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
