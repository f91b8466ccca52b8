// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// TestPoolChange: every client language's change names its stack's pool
// library, constructed with the size given, and (but Go's) its README.
func TestPoolChange(t *testing.T) {
	const n = 7
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"go", []string{"github.com/rpclab/rpclab/pool", "pool.New(target, pool.WithSize(7)"}},
		{"", []string{"pool.WithSize(7)"}}, // a record without a language is Go's
		{"java", []string{"io.rpclab.pool.ChannelPool", "ChannelPool.forTarget(target, creds).size(7)", "clients/java/pool/README.md"}},
		{"rust", []string{"rpclab-pool", "rpclab_pool::Pool::connect(ep, 7,", "clients/rust/pool/README.md"}},
		{"cpp", []string{"rpclab/channel_pool.h", "rpclab::ChannelPool pool(target, 7,", "clients/cpp/pool/README.md"}},
		{"python", []string{"import rpclab_pool", "rpclab_pool.ChannelPool(target, 7, credentials=creds)", "clients/python/pool/README.md"}},
		{"node", []string{"@rpclab/grpc-pool", "new ChannelPool(target, grpc.credentials.createInsecure(), { size: 7 })", "channelOverride: pool", "clients/node/pool/README.md"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			var b bytes.Buffer
			PoolChange(&b, tc.lang, n)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("got %q, want it to contain %q", b.String(), w)
				}
			}
			if strings.Contains(b.String(), "{N}") {
				t.Errorf("got %q, want the size filled in", b.String())
			}
		})
	}
}

// TestDoctorTextPrintsTheRecordsStack: the verdict of a Python study
// advises Python's pool, not Go's; a study that finds no bottleneck
// prints no change.
func TestDoctorTextPrintsTheRecordsStack(t *testing.T) {
	ping := func(lang, conn string, size, n int, rps float64) result.Record {
		return result.Record{
			SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
			Spec: result.Spec{Target: "127.0.0.1:50051", RPC: "unary", LoadModel: "closed", Inflight: n,
				ConnMode: conn, ConnsRequested: size},
			Env:        result.Env{Language: lang, HostCPUs: 2},
			DurationNS: 1e9, ThroughputRPS: rps, Requests: int64(rps), ConnsObserved: size,
			ClientCPUNSPerRPC: 10e3, ClientCPUNS: int64(10e3 * rps),
		}
	}
	for _, tc := range []struct {
		name     string
		lang     string
		poolRPS  float64
		want     []string
		dontWant []string
	}{
		{"python bottleneck", "python", 20000, []string{"use 2 connections (pool:2", "rpclab_pool.ChannelPool(target, 2, credentials=creds)"}, []string{"pool.WithSize"}},
		{"go bottleneck", "go", 20000, []string{"use 2 connections (pool:2", "pool.WithSize(2)"}, []string{"rpclab_pool"}},
		{"python no bottleneck", "python", 10000, []string{"No clear bottleneck"}, []string{"rpclab_pool", "The change"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []result.Record
			for _, n := range []int{8, 32} {
				scale := float64(n) / 32
				recs = append(recs, ping(tc.lang, "shared", 1, n, scale*10000), ping(tc.lang, "pool", 2, n, scale*tc.poolRPS))
			}
			var doc bytes.Buffer
			DoctorText(&doc, recs, nil)
			for _, w := range tc.want {
				if !strings.Contains(doc.String(), w) {
					t.Errorf("got %q, want it to contain %q", doc.String(), w)
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(doc.String(), w) {
					t.Errorf("got %q, want it without %q", doc.String(), w)
				}
			}
		})
	}
}

// TestGroupsNameTheMethod: records of two methods against one target are
// two groups, each titled with its method and target, as their verdicts
// are two.
func TestGroupsNameTheMethod(t *testing.T) {
	var recs []result.Record
	for _, call := range []string{"kv.KV/Range", "kv.KV/Put"} {
		for _, conn := range []string{"shared", "pool"} {
			r := result.Record{
				SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
				Spec: result.Spec{Target: "127.0.0.1:2379", RPC: "unary", LoadModel: "closed", Inflight: 8,
					ConnMode: conn, ConnsRequested: 1, Call: call},
				Env: result.Env{Language: "go", HostCPUs: 2}, DurationNS: 1e9, ThroughputRPS: 1000, Requests: 1000,
			}
			recs = append(recs, r)
		}
	}
	gs := Groups([]Run{{Name: "run", Records: recs}})
	if len(gs) != 2 {
		t.Fatalf("got %d groups, want one per method", len(gs))
	}
	for i, call := range []string{"kv.KV/Range", "kv.KV/Put"} {
		if want := "unary RPCs of " + call + ", 0 B payload, closed loop, against 127.0.0.1:2379"; !strings.Contains(gs[i].Title, want) {
			t.Errorf("group %d: got title %q, want it to contain %q", i, gs[i].Title, want)
		}
	}
}
