// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/result"
)

// TestSweepYDBDebugService: rpclab sweep --service ydb-debug pings YDB's
// DebugService on rpclab's own server (a child process), unary and
// streaming; every step is ok and says ydb-debug in spec.service, and
// carries the server's CPU (rpclab serve answers UsageService).
func TestSweepYDBDebugService(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultTestTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	cmd := rpclabCmd(ctx, "sweep", "--service", "ydb-debug", "--rpc", "unary,streaming", "--inflight", "1,2", "--conn", "shared",
		"--warmup", "100ms", "--interval", "300ms", "-o", out)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("sweep: %v; stderr:\n%s", err, e.String())
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("got %d records, want 4", len(recs))
	}
	for _, r := range recs {
		if r.Status != result.StatusOK || r.Requests == 0 || r.Spec.Service != "ydb-debug" || r.Spec.Server != "go" {
			t.Errorf("%s inflight=%d: status %q (%s), %d requests, service %q, server %q; want ok, ydb-debug, go",
				r.Spec.RPC, r.Spec.Inflight, r.Status, r.Error, r.Requests, r.Spec.Service, r.Spec.Server)
		}
		if sc := r.ServerCPU; sc == nil || sc.CPUNS <= 0 || sc.CPUs < 1 || sc.Busy <= 0 {
			t.Errorf("%s inflight=%d: server_cpu %+v, want the child server's CPU over the interval", r.Spec.RPC, r.Spec.Inflight, r.ServerCPU)
		}
	}
}

// publishedYDB is YDB's published table as shipped, and the CSV it is
// imported from.
var publishedYDB = filepath.Join("..", "..", "docs", "published", "ydb-2025")

// TestPublishedYDB: docs/published/ydb-2025.jsonl is rpclab import of
// docs/published/ydb-2025.csv (every figure the same; its source names the
// post), and rpclab report on it says shared only, 3.7x the throughput at
// 10x the in-flight count, 37% of the ideal line.
func TestPublishedYDB(t *testing.T) {
	shipped, err := result.ReadFile(publishedYDB + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "imported.jsonl")
	if code, _, stderr := runInProcess("import", publishedYDB+".csv", "--source", "x", "-o", out); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	imported, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(shipped) != 21 || len(imported) != len(shipped) {
		t.Fatalf("got %d shipped and %d imported records, want 21 each (in-flight 1..21)", len(shipped), len(imported))
	}
	for i := range shipped {
		s, m := shipped[i], imported[i]
		if !strings.Contains(s.Source, "blog.ydb.tech") || !strings.Contains(s.Source, "3.7x") {
			t.Errorf("record %d: source %q does not name the post and its figure", i, s.Source)
		}
		if s.Spec.Service != "ydb-debug" || s.Spec.ConnMode != "shared" || s.Env.Language != "cpp" {
			t.Errorf("record %d: service %q, layout %q, language %q; want ydb-debug, shared, cpp", i, s.Spec.Service, s.Spec.ConnMode, s.Env.Language)
		}
		m.Source, m.Spec.Target = s.Source, s.Spec.Target
		if !reflect.DeepEqual(s, m) {
			t.Errorf("record %d: shipped %+v, imported from the CSV %+v", i, s, m)
		}
	}

	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := runInProcess("report", publishedYDB+".jsonl", "-o", html); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shared only: at in-flight 10 (10x in-flight 1) one connection gave 3.7x the throughput of in-flight 1", "37% of its ideal line"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
