// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
)

// TestFillWritesLatencyClamped: an RPC slower than the histogram's range is
// counted in the record's latency_clamped, and the record still validates.
func TestFillWritesLatencyClamped(t *testing.T) {
	tests := []struct {
		name string
		lats []time.Duration
		want int64
	}{
		{"none above the max", []time.Duration{time.Millisecond, time.Duration(stats.HighestTrackable)}, 0},
		{"two above the max", []time.Duration{time.Millisecond, time.Duration(stats.HighestTrackable) + 1, 200 * time.Second}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := stats.NewRecorder()
			for _, d := range tc.lats {
				r.Record(d, codes.OK)
			}
			rec := &result.Record{SchemaVersion: result.SchemaVersion, Kind: result.KindPing, Status: result.StatusOK,
				StartedAt: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Errors: map[string]int64{},
				Spec: result.Spec{Target: "127.0.0.1:1", RPC: "unary", ConnMode: "shared", ConnsRequested: 1, Inflight: 1, IntervalNS: 1e9, LoadModel: "closed"},
				Env:  result.Env{Language: "go", GRPCImpl: "grpc-go", HostCPUs: 1}}
			fill(rec, stats.Merge(r), time.Second, time.Millisecond)
			if rec.LatencyClamped != tc.want {
				t.Errorf("got latency_clamped %d, want %d", rec.LatencyClamped, tc.want)
			}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			if err := result.Validate(b); err != nil {
				t.Errorf("the record does not validate: %v", err)
			}
		})
	}
}
