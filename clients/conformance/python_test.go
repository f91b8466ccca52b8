// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/stats"
)

// grpcio is C-core: channels whose target and arguments are identical share
// one subchannel, so one TCP connection, through the global subchannel pool.
// shared and channel-per-worker (the trap) are therefore one connection
// whatever the in-flight count; local-pool (grpc.use_local_subchannel_pool),
// per-worker (the same argument) and distinct-args (a unique argument per
// channel) are one per worker; pool:N is N channels with local pools.
func init() { expectations["python"] = cCoreStyle }

// TestPythonDirect: see testDirect (java_test.go).
func TestPythonDirect(t *testing.T) { testDirect(t, "python") }

// buildPython builds the Python client and returns its venv's python.
func buildPython(t *testing.T) string {
	t.Helper()
	selected(t, "python")
	return filepath.Join(build(t, "python").Dir, ".venv", "bin", "python")
}

// pythonIn runs the Python client's venv python with args in clients/python.
func pythonIn(t *testing.T, py string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Dir = filepath.Dir(filepath.Dir(filepath.Dir(py)))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+cmd.Dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("%s", stderr.String())
	}
	return stdout.Bytes()
}

// TestPythonUnit runs the Python client's own unit tests (command line, steps file, record).
func TestPythonUnit(t *testing.T) {
	py := buildPython(t)
	pythonIn(t, py, "-m", "unittest", "discover", "-s", "tests", "-t", ".")
}

// TestPythonPoolUnit runs the tests of the pool library in clients/python/pool
// (rpclab_pool.ChannelPool, installed into the client's venv by build.sh)
// against a real grpcio server: 4 connections as the kernel saw them, a
// generated stub through the pool, least-loaded, a server restart.
func TestPythonPoolUnit(t *testing.T) {
	py := buildPython(t)
	unitTests(t, filepath.Join("python", "pool"), py, "-m", "unittest", "discover", "-s", "tests", "-t", ".")
}

// TestPythonPoolConns: see testPoolConnsSeen.
func TestPythonPoolConns(t *testing.T) { testPoolConnsSeen(t, "python") }

// testPoolConnsSeen runs lang's client on steps of pool:4 and
// pool:4:least-loaded (a layout rpclab sweep does not hand other languages'
// clients, so the steps go through extclient directly), unary and streaming
// at in-flight 8, against a Go server: each step's record must say the pick
// it was given, and the operating system must have seen 4 connections
// (conns_observed), the pool library's channels each with its own.
func testPoolConnsSeen(t *testing.T, lang string) {
	selected(t, lang)
	conns := []string{"pool:4", "pool:4:least-loaded"}
	e := build(t, lang, conns...)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Options{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := &loadgen.Spec{Target: lis.Addr().String(), RPCs: []string{"unary", "streaming"}, Inflight: []int{8},
		Warmup: 200 * time.Millisecond, Interval: 500 * time.Millisecond, DialTimeout: 5 * time.Second}
	var recs []result.Record
	err = e.Sweep(ctx, spec, func(r *result.Record) error { recs = append(recs, *r); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pool:4", "pool:4:least-loaded", "pool:4", "pool:4:least-loaded"}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if got := r.Spec.ConnLabel(); got != want[i] {
			t.Errorf("record %d: got layout %q, want %q", i, got, want[i])
		}
		if r.Status != result.StatusOK || r.ConnsObserved != 4 {
			t.Errorf("%s %s: got status %q and %d connections, want ok and 4 (%s)", r.Spec.ConnLabel(), r.Spec.RPC, r.Status, r.ConnsObserved, r.Error)
		}
	}
}

// The Python side of TestPythonHistogram: values spread over the whole
// range, recorded into three worker histograms (one left empty), merged and
// encoded by the client's own code.
const pyHistogram = `
import json, random
from rpclab_client import record
rng = random.Random(8)
values = [1, 2, 999, 1000, 1001, 2047, 2048, 2049, 30000, 31000, 31000, 123456, 2000000,
          999999999, record.HIGHEST]
values += [int(10 ** rng.uniform(3, 8)) for _ in range(20000)]
ws = [record.new_histogram() for _ in range(3)]
for i, v in enumerate(values):
    assert ws[i % 2].record_value(v), v
h = record.merge(ws)
print(json.dumps({"hdr": record.encode(h), "values": values, "min": h.get_min_value(),
    "max": h.get_max_value(), "quantiles": {str(q): h.get_value_at_percentile(q * 100)
    for q in (0.5, 0.9, 0.99, 0.999)}}))
`

// TestPythonHistogram checks that hdrhistogram-go decodes what the Python
// client's histogram code (HdrHistogram_py) encodes exactly: every value in
// the bucket it was recorded in, and the same min, max and quantiles.
func TestPythonHistogram(t *testing.T) {
	py := buildPython(t)
	var got struct {
		HDR       string           `json:"hdr"`
		Values    []int64          `json:"values"`
		Min       int64            `json:"min"`
		Max       int64            `json:"max"`
		Quantiles map[string]int64 `json:"quantiles"`
	}
	out := pythonIn(t, py, "-c", pyHistogram)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	h, err := stats.DecodeHistogram(got.HDR)
	if err != nil {
		t.Fatal(err)
	}
	if n, want := h.TotalCount(), int64(len(got.Values)); n != want {
		t.Fatalf("decoded %d values, want %d", n, want)
	}
	if h.Min() != got.Min || h.Max() != got.Max {
		t.Errorf("decoded min/max %d/%d, Python says %d/%d", h.Min(), h.Max(), got.Min, got.Max)
	}
	for qs, want := range got.Quantiles {
		var q float64
		if err := json.Unmarshal([]byte(qs), &q); err != nil {
			t.Fatal(err)
		}
		if v := h.ValueAtQuantile(q * 100); v != want {
			t.Errorf("quantile %s: got %d, Python says %d", qs, v, want)
		}
	}
	// Every bucket holds exactly the values that fall in its range.
	slices.Sort(got.Values)
	var seen int64
	for _, b := range h.Distribution() {
		seen += b.Count
		lo, _ := slices.BinarySearch(got.Values, b.From)
		hi, _ := slices.BinarySearch(got.Values, b.To+1)
		if want := int64(hi - lo); b.Count != want {
			t.Errorf("bucket %d..%d: got %d values, want %d", b.From, b.To, b.Count, want)
		}
	}
	if want := int64(len(got.Values)); seen != want {
		t.Errorf("the buckets hold %d values, want %d", seen, want)
	}
}
