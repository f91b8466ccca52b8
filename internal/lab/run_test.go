// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
)

// TestUnmeasuredIsLoadgensRecord: the record a session keeps for a step
// cut off before it measured anything is loadgen's record of that step
// (the one builder), failed, in the client's load model, and for another
// language's client naming that language and no Go versions.
func TestUnmeasuredIsLoadgensRecord(t *testing.T) {
	pool4, err := loadgen.ParseConnMode("pool:4:least-loaded")
	if err != nil {
		t.Fatal(err)
	}
	spec := &loadgen.Spec{Target: "127.0.0.1:1", Server: "go", PayloadBytes: 64, Warmup: time.Second, Interval: 2 * time.Second}
	st := loadgen.Step{Conn: pool4, RPC: loadgen.Streaming, Inflight: 8}
	cpus := []int{2, 3}
	tests := []struct {
		name string
		c    Client
		want func(r *result.Record)
	}{
		{"go closed", Client{Name: "go", LoadModel: "closed"}, func(*result.Record) {}},
		{"go, no model", Client{Name: "go"}, func(*result.Record) {}},
		{"go open", Client{Name: "go", LoadModel: "open"}, func(r *result.Record) { r.Spec.LoadModel = "open" }},
		{"java", Client{Name: "java", LoadModel: "closed"}, func(r *result.Record) {
			r.Env.Language, r.Env.GRPCImpl, r.Env.GRPCVersion, r.Env.RuntimeVersion = "java", unknownImpl, "", ""
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := unmeasured(spec, st, tc.c, cpus)
			want := loadgen.NewRecord(spec, st, loadgen.Options{ClientCPUs: cpus})
			want.Status = result.StatusFailed
			tc.want(want)
			// rpclab validate accepts what rpclab writes.
			if b, err := json.Marshal(got); err != nil {
				t.Fatal(err)
			} else if err := result.Validate(b); err != nil {
				t.Errorf("the record does not validate: %v", err)
			}
			if got.StartedAt.IsZero() {
				t.Errorf("got no started_at")
			}
			got.StartedAt, want.StartedAt = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
			if got.Spec.ConnLabel() != "pool:4:least-loaded" || got.Spec.ConnsRequested != 4 || got.Spec.Inflight != 8 || got.Spec.RPC != loadgen.Streaming {
				t.Errorf("got spec %+v, want the step's: pool:4:least-loaded, 4 connections, 8 in flight, streaming", got.Spec)
			}
		})
	}
}
