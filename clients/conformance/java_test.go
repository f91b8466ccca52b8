// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/stats"
)

// grpc-java opens a connection per ManagedChannel (each channel has its own
// subchannels) and multiplexes every call of a channel on it: shared is one
// connection whatever the in-flight count, per-worker one per worker, pool:N
// is N.
func init() { expectations["java"] = ownConnPerChannel }

func TestJavaDirect(t *testing.T) { testDirect(t, "java") }

// TestJavaUnit runs the Java client's own JUnit tests (its command line,
// the steps file, the record and its histogram, the worker merge, steps
// against a Netty server on loopback) with Maven Surefire, fetching the test dependencies
// from Maven Central like build.sh (RPCLAB_MVN_FLAGS=-o: from ~/.m2 only).
func TestJavaUnit(t *testing.T) {
	selected(t, "java")
	build(t, "java")
	args := append([]string{"-q", "-B", "-Dstyle.color=never"}, strings.Fields(os.Getenv("RPCLAB_MVN_FLAGS"))...)
	// The reactor builds the pool the client depends on (-am); its tests are TestJavaPoolUnit's.
	unitTests(t, "java", "mvn", append(args, "-f", "parent/pom.xml", "-pl", ":rpclab-client", "-am", "test",
		"-Dtest=io/rpclab/client/**/*", "-Dsurefire.failIfNoSpecifiedTests=false")...)
}

// TestJavaPoolUnit runs the JUnit tests of the pool library in
// clients/java/pool (io.rpclab.pool.ChannelPool) with Maven Surefire against
// a real grpc-java Netty server on loopback: N connections as the server
// accepted them, a generated stub through the pool, least-loaded, a dead
// channel skipped, a server stopped and restarted on the same port; growth
// at a server's stream limit (4 connections for 16 held calls, as the
// kernel counts them; 1 with growth off; idle grown channels retired), a
// refused channel redialled (GrowthTest); least-loaded as power of two
// choices over a seeded Random (PickerTest); every instrument's kind, unit,
// attributes and values read back (MetricsTest); a call cancelled before it
// starts never counted in flight (InFlightTest).
func TestJavaPoolUnit(t *testing.T) {
	selected(t, "java")
	if _, err := exec.LookPath("mvn"); err != nil {
		t.Skip("mvn not found: no Java toolchain")
	}
	args := append([]string{"-q", "-B", "-Dstyle.color=never"}, strings.Fields(os.Getenv("RPCLAB_MVN_FLAGS"))...)
	unitTests(t, filepath.Join("java", "pool"), "mvn", append(args, "test")...)
}

// TestJavaPool runs the Java client's pool:4 (its ChannelPool) through
// rpclab sweep: 4 connections as the kernel saw them at in-flight 1 and 8,
// round-robin recorded as the pick.
func TestJavaPool(t *testing.T) {
	selected(t, "java")
	build(t, "java", "pool:4")
	recs := sweep(t, 3*time.Minute, 4, "--client", "java", "--clients-dir", ".",
		"--inflight", "1,8", "--conn", "pool:4", "--rpc", "unary,streaming", "--warmup", "300ms", "--interval", "1s")
	checkHistograms(t, recs)
	for _, r := range recs {
		if got, want := r.ConnsObserved, 4; got != want {
			t.Errorf("%s inflight=%d: got %d connections, want %d", r.Spec.RPC, r.Spec.Inflight, got, want)
		}
		if got, want := r.Spec.Pick, "round-robin"; got != want {
			t.Errorf("%s inflight=%d: got pick %q, want %q", r.Spec.RPC, r.Spec.Inflight, got, want)
		}
	}
}

// TestJavaAsyncStub runs the Java client's second unary path (async stub,
// calls chained in callbacks) through rpclab sweep: records must validate,
// decode, and show the same connections per layout as the blocking stub.
func TestJavaAsyncStub(t *testing.T) {
	selected(t, "java")
	t.Setenv("RPCLAB_JAVA_STUB", "async")
	recs := sweep(t, 3*time.Minute, 4, "--client", "java", "--clients-dir", ".",
		"--inflight", "1,4", "--conn", "shared,per-worker", "--rpc", "unary", "--warmup", "300ms", "--interval", "1s")
	checkHistograms(t, recs)
	for _, r := range recs {
		if !strings.Contains(r.Env.RuntimeVersion, "async stub") {
			t.Errorf("env.runtime_version = %q, want it to name the async stub", r.Env.RuntimeVersion)
		}
		want := 1
		if r.Spec.ConnMode == "per-worker" {
			want = r.Spec.Inflight
		}
		if r.ConnsObserved != want {
			t.Errorf("%s inflight=%d: got %d connections, want %d", r.Spec.ConnMode, r.Spec.Inflight, r.ConnsObserved, want)
		}
	}
}

// checkHistograms checks that every record's histogram decodes in Go and
// holds one value per successful RPC, and that CPU and env are filled in.
func checkHistograms(t *testing.T, recs []result.Record) {
	t.Helper()
	for _, r := range recs {
		h, err := stats.DecodeHistogram(r.HistogramHDR)
		if err != nil {
			t.Fatalf("%s %s inflight=%d: %v", r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, err)
		}
		var errs int64
		for _, n := range r.Errors {
			errs += n
		}
		if got, want := h.TotalCount(), r.Requests-errs; got != want || got == 0 {
			t.Errorf("%s %s inflight=%d: histogram holds %d values, want %d (successful RPCs, > 0)",
				r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, got, want)
		}
		if got, want := h.Max(), r.Latency.P100NS; got != want {
			t.Errorf("%s %s inflight=%d: decoded max %d ns, record says p100 %d ns", r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, got, want)
		}
		if r.Env.GRPCImpl == "" || r.Env.GRPCVersion == "" || r.Env.RuntimeVersion == "" {
			t.Errorf("env lacks the stack or its versions: %+v", r.Env)
		}
		if r.ClientCPUNS <= 0 {
			t.Errorf("%s %s inflight=%d: client_cpu_ns = %d, want > 0", r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, r.ClientCPUNS)
		}
	}
}

// countingServer serves rpclab's ping service on a loopback port in this
// process and counts the RPCs (and stream messages) it has answered.
func countingServer(t *testing.T) (addr string, rpcs *atomic.Int64) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rpcs = new(atomic.Int64)
	srv := server.New(server.Options{},
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			rpcs.Add(1)
			return h(ctx, req)
		}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), rpcs
}

// testDirect runs lang's client straight against a Go server: every
// histogram it writes must decode in Go and hold one value per successful
// RPC, and SIGTERM during an interval must end the client with its
// interrupted record written.
func testDirect(t *testing.T, lang string) {
	selected(t, lang)
	build(t, lang)
	addr, rpcs := countingServer(t)
	client := filepath.Join("..", lang, "rpclab-client")

	t.Run("histograms", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out := filepath.Join(t.TempDir(), "r.jsonl")
		cmd := exec.CommandContext(ctx, client, stepsArgs(t, &loadgen.Spec{Target: addr, RPCs: []string{loadgen.Unary, loadgen.Streaming},
			Inflight: []int{1, 3}, PayloadBytes: 100, Warmup: 200 * time.Millisecond, Interval: 500 * time.Millisecond},
			[]string{"shared", "per-worker"}, out)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v; stderr:\n%s", cmd.Args, err, stderr.String())
		}
		recs, err := result.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(recs), 8; got != want {
			t.Fatalf("got %d records, want %d", got, want)
		}
		checkHistograms(t, recs)
	})

	t.Run("sigterm", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out := filepath.Join(t.TempDir(), "r.jsonl")
		cmd := exec.CommandContext(ctx, client, stepsArgs(t, &loadgen.Spec{Target: addr, RPCs: []string{loadgen.Unary},
			Inflight: []int{2}, Interval: 10 * time.Minute}, []string{"shared"}, out)...)
		// The Java client's JIT warm-up makes RPCs before the first step: skip it here
		// (RPCLAB_JAVA_JIT_WARMUP_MS, milliseconds: clients/java/README.md).
		cmd.Env = append(os.Environ(), "RPCLAB_JAVA_JIT_WARMUP_MS=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		before := rpcs.Load()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// With no warm-up, RPCs reaching the server mean the interval runs.
		for rpcs.Load() < before+100 {
			select {
			case <-ctx.Done():
				_ = cmd.Process.Kill()
				t.Fatalf("the client made no RPCs; stderr:\n%s", stderr.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if ctx.Err() != nil {
			t.Fatalf("the client did not stop on SIGTERM; stderr:\n%s", stderr.String())
		}
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		recs, err := result.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].Status != result.StatusInterrupted || recs[0].Requests == 0 {
			t.Fatalf("got %d records (%+v), want one interrupted record with requests; stderr:\n%s", len(recs), recs, stderr.String())
		}
	})
}
