// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// TestSweepAndDoctorAdviseAlike feeds the same records to the sweep path
// (verdict.Text, as rpclab sweep and report print it) and to doctor's
// (DoctorText) and wants the same verdict, word for word, and the change
// for the advised layout. The records are chosen so that two plausible
// rules differ: the fewest connections within 90% of the best is pool:2,
// the lowest client CPU per RPC within 90% is pool:4.
func TestSweepAndDoctorAdviseAlike(t *testing.T) {
	layouts := []struct {
		conn      string
		size      int
		top, cpu  float64 // req/s at the top in-flight count, ns per RPC
		lowerRate float64 // req/s at the lower counts
	}{
		{"shared", 1, 10000, 15e3, 9000},
		{"pool", 2, 18500, 20e3, 15000},
		{"pool", 4, 20000, 10e3, 16000},
		{"pool", 8, 19500, 12e3, 16000},
	}
	var recs []result.Record
	for _, n := range []int{8, 16, 32} {
		for _, l := range layouts {
			rps := l.lowerRate
			if n == 32 {
				rps = l.top
			}
			recs = append(recs, result.Record{
				SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
				Spec: result.Spec{Target: "127.0.0.1:50051", RPC: "unary", LoadModel: "closed", Inflight: n,
					ConnMode: l.conn, ConnsRequested: l.size},
				Env:        result.Env{Language: "go", HostCPUs: 2},
				DurationNS: 1e9, ThroughputRPS: rps, Requests: int64(rps), ConnsObserved: l.size,
				ClientCPUNSPerRPC: l.cpu, ClientCPUNS: int64(l.cpu * rps),
			})
		}
	}
	// The old doctor rule: the lowest CPU per RPC among pools within 90%
	// of the best. It must pick another layout, or this test shows nothing.
	var oldDoctor string
	lowest := 0.0
	for _, l := range layouts[1:] {
		if l.top >= 0.9*20000 && (oldDoctor == "" || l.cpu < lowest) {
			oldDoctor, lowest = "pool:"+strconv.Itoa(l.size), l.cpu
		}
	}
	if oldDoctor != "pool:4" {
		t.Fatalf("the records no longer separate the old rules (old doctor rule picks %s)", oldDoctor)
	}

	vs := verdict.Verdicts(recs)
	if len(vs) != 1 || vs[0].Kind != verdict.ConnBottleneck {
		t.Fatalf("sweep: got %+v, want one connection-bottleneck verdict", vs)
	}
	if n := vs[0].Conns; n != 2 {
		t.Errorf("got %d connections advised, want 2: the fewest reaching %.0f%% of the best", n, 100*verdict.EnoughOfBest)
	}
	var doc bytes.Buffer
	DoctorText(&doc, recs, nil)
	for _, c := range []struct{ text, want string }{
		{verdict.Text(vs), "use 2 connections (pool:2"},
		{doc.String(), "\nVerdict:\n" + verdict.Text(vs) + "\n"},
		{doc.String(), "pool.WithSize(2)"},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("got %q, want it to contain %q", c.text, c.want)
		}
	}
}

// TestDoctorAdvisesAdaptivePool: a study whose adaptive pool at least
// matches the best fixed pool advises it, with pool.WithAdaptive and its
// bounds; one whose adaptive pool falls short advises the fixed pool.
func TestDoctorAdvisesAdaptivePool(t *testing.T) {
	ping := func(conn string, min, size, n int, rps float64) result.Record {
		return result.Record{
			SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
			Spec: result.Spec{Target: "127.0.0.1:50051", RPC: "unary", LoadModel: "closed", Inflight: n,
				ConnMode: conn, ConnsMin: min, ConnsRequested: size},
			Env:        result.Env{Language: "go", HostCPUs: 2},
			DurationNS: 1e9, ThroughputRPS: rps, Requests: int64(rps), ConnsObserved: max(min, size/3),
			ClientCPUNSPerRPC: 10e3, ClientCPUNS: int64(10e3 * rps),
		}
	}
	for _, tc := range []struct {
		name    string
		autoRPS float64
		want    []string
	}{
		{"matches the best fixed pool", 19000, []string{"use the adaptive pool", "pool.WithAdaptive(1, 8)"}},
		{"falls short of it", 17000, []string{"use 2 connections (pool:2", "pool.WithSize(2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []result.Record
			for _, n := range []int{8, 32} {
				scale := float64(n) / 32
				recs = append(recs, ping("shared", 0, 1, n, scale*10000), ping("pool", 0, 2, n, scale*20000),
					ping(verdict.AutoPoolMode, 1, 8, n, scale*tc.autoRPS))
			}
			var doc bytes.Buffer
			DoctorText(&doc, recs, nil)
			for _, w := range tc.want {
				if !strings.Contains(doc.String(), w) {
					t.Errorf("got %q, want it to contain %q", doc.String(), w)
				}
			}
		})
	}
}
