// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// TestPoolSizeFigure: a group with a pool:auto step gets the pool-size
// chart after its other figures, the sizes drawn as steps to the end of
// the interval, and it renders; a group without one does not get it.
func TestPoolSizeFigure(t *testing.T) {
	ping := func(mode string, minConns, conns, n int) result.Record {
		return result.Record{
			SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
			Spec: result.Spec{Target: "127.0.0.1:50051", RPC: "unary", LoadModel: "closed", Inflight: n,
				ConnMode: mode, ConnsMin: minConns, ConnsRequested: conns, IntervalNS: 10e9},
			Env:        result.Env{Language: "go", HostCPUs: 2},
			DurationNS: 10e9, ThroughputRPS: 1000, Requests: 10000, ConnsObserved: 1,
		}
	}
	auto := ping("pool-auto", 1, 8, 32)
	auto.PoolSizes = []result.PoolSize{{TNS: 0, Size: 1, Reason: "start"}, {TNS: 2e9, Size: 2, Reason: "grow"}, {TNS: 6e9, Size: 1, Reason: "no gain"}}
	tests := []struct {
		name string
		recs []result.Record
		want []Series // nil: no pool-size figure
	}{
		{"with an adaptive step", []result.Record{ping("shared", 0, 1, 32), auto}, []Series{{
			Label: "pool:auto:1:8 in-flight 32", Color: 0, Shape: -1,
			Points: []Point{{0, 1}, {2, 1}, {2, 2}, {6, 2}, {6, 1}, {10, 1}},
		}}},
		{"without one", []result.Record{ping("shared", 0, 1, 32), ping("pool", 0, 4, 32)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gs := Groups([]Run{{Name: "run", Records: tc.recs}})
			if len(gs) != 1 {
				t.Fatalf("got %d groups, want 1", len(gs))
			}
			figs := gs[0].Figures
			last := figs[len(figs)-1]
			if tc.want == nil {
				if last.Kind == FigPoolSize {
					t.Errorf("got a %s figure in a group without an adaptive step", FigPoolSize)
				}
				return
			}
			if last.Kind != FigPoolSize || !reflect.DeepEqual(last.Series, tc.want) {
				t.Fatalf("got last figure %s %+v, want %s %+v", last.Kind, last.Series, FigPoolSize, tc.want)
			}
			svg, err := last.SVG()
			if err != nil || !bytes.Contains(svg, []byte("Adaptive pool size")) {
				t.Errorf("got SVG %d bytes, %v, want the chart titled", len(svg), err)
			}
		})
	}
}
