// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/pool"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// The Go pool (pool/, module github.com/rpclab/rpclab/pool). Go is always
// there, so these tests need no RPCLAB_CLIENTS; they build rpclab
// themselves when TestMain did not.

// withRPCLab makes sure rpclabBin is built, for serveRPCLab.
func withRPCLab(t *testing.T) {
	t.Helper()
	if rpclabBin != "" {
		return
	}
	bin := filepath.Join(t.TempDir(), "rpclab")
	run(t, 5*time.Minute, ".", nil, "go", "build", "-o", bin, "../../cmd/rpclab")
	rpclabBin = bin
	t.Cleanup(func() { rpclabBin = "" })
}

// goPoolExample is what a stranger writes: ten lines around pool.New,
// with grpc-go's own stubs for the benchmark service rpclab serves.
const goPoolExample = `package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rpclab/rpclab/pool"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pb "google.golang.org/grpc/interop/grpc_testing"
)

func main() {
	p, err := pool.New(os.Args[1], pool.WithSize(4),
		pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := pb.NewBenchmarkServiceClient(p)
	for i := 0; i < 200; i++ {
		if _, err := client.UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: 1}); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	fmt.Printf("ok 200 over %d connections\n", p.Size())
}
`

// TestGoPoolInstall is the Go pool as a stranger uses it: a fresh module in
// a temporary directory, outside the tree, requiring
// github.com/rpclab/rpclab/pool through a replace onto a copy of pool/ (the
// published path does not resolve before the first pool/v tag), go mod
// tidy from the module proxy, a build, and a run against rpclab serve. The
// module graph holds no part of the rpclab module itself.
func TestGoPoolInstall(t *testing.T) {
	withRPCLab(t)
	tmp := t.TempDir()
	copyTree(t, filepath.Join("..", "..", "pool"), filepath.Join(tmp, "pool"))
	app := filepath.Join(tmp, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "main.go"), []byte(goPoolExample), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOFLAGS=-mod=mod", "GOWORK=off"}
	run(t, time.Minute, app, env, "go", "mod", "init", "example.com/app")
	run(t, time.Minute, app, env, "go", "mod", "edit",
		"-require=github.com/rpclab/rpclab/pool@v0.0.0", "-replace=github.com/rpclab/rpclab/pool=../pool")
	run(t, 5*time.Minute, app, env, "go", "mod", "tidy")
	// The app builds with the grpc-go the pool requires, not a newer one.
	var req struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal([]byte(run(t, time.Minute, filepath.Join(tmp, "pool"), env, "go", "mod", "edit", "-json")), &req); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, r := range req.Require {
		want[r.Path] = r.Version
	}
	mods := run(t, time.Minute, app, env, "go", "list", "-m", "all")
	for _, l := range strings.Split(mods, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case f[0] == "github.com/rpclab/rpclab":
			t.Errorf("the app's module graph holds the rpclab module: %s", l)
		case f[0] == "google.golang.org/grpc" && (len(f) < 2 || f[1] != want[f[0]]):
			t.Errorf("the app selected %s, want grpc-go %s as pool/go.mod requires", l, want[f[0]])
		}
	}
	run(t, 5*time.Minute, app, env, "go", "build", "-o", "app", ".")
	addr := serveRPCLab(t).Addr
	if out := run(t, time.Minute, app, nil, "./app", addr); !strings.Contains(out, "ok 200 over 4 connections") {
		t.Fatalf("app: %s", out)
	}
}

// TestGoPoolRestart: see testPoolRestart. Its program is
// pool/internal/restart, built in the pool module (grpc-go's own stubs for
// the benchmark service; nothing of the lab's).
func TestGoPoolRestart(t *testing.T) {
	withRPCLab(t)
	bin := filepath.Join(t.TempDir(), "restart")
	run(t, 5*time.Minute, filepath.Join("..", "..", "pool"), nil, "go", "build", "-o", bin, "./internal/restart")
	testPoolRestart(t, ".", nil, bin)
}

// TestGoPoolStreamLimit is the known answer for growth at the server's
// stream limit, as TestPythonPoolStreamLimit: against rpclab serve
// --max-concurrent-streams 4 --delay 2ms, 16 RPCs in flight through a
// pool of size 1 make 4 connections as the kernel sees them with growth
// on (max 8, limit 4) and 1 with it off.
func TestGoPoolStreamLimit(t *testing.T) {
	withRPCLab(t)
	srv := serveRPCLab(t, "--max-concurrent-streams", "4", "--delay", "2ms")
	on := goStreamLimitRun(t, srv.Addr, 2*time.Second, pool.WithStreamLimit(4, 8))
	off := goStreamLimitRun(t, srv.Addr, 2*time.Second)
	b, err := json.Marshal(map[string]any{"on": on, "off": off, "ratio": float64(on.RPS) / float64(max(off.RPS, 1))})
	if err != nil {
		t.Fatal(err)
	}
	checkStreamLimit(t, string(b), "RPCs/s")
}

// goStreamResult is one half of checkStreamLimit's JSON.
type goStreamResult struct {
	Conns, Channels, RPS, Resizes int
}

// goStreamLimitRun runs 16 callers through a pool of size 1 with opts, and
// returns the connections the kernel had to addr once 400 RPCs were done,
// the pool's size then, the RPCs per second over the measured interval,
// and the resizes its metrics counted.
func goStreamLimitRun(t *testing.T, addr string, measure time.Duration, opts ...pool.Option) goStreamResult {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	p, err := pool.New(addr, append([]pool.Option{pool.WithSize(1), pool.WithMeterProvider(mp),
		pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials()))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := pb.NewBenchmarkServiceClient(p)
	var done atomic.Int64
	var stop atomic.Bool
	warm := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := client.UnaryCall(ctx, &pb.SimpleRequest{}); err != nil {
					errs <- err
					return
				}
				if done.Add(1) >= 400 {
					once.Do(func() { close(warm) })
				}
			}
		}()
	}
	select {
	case <-warm:
	case err := <-errs:
		t.Fatalf("call: %v", err)
	case <-ctx.Done():
		t.Fatal("400 RPCs not done within a minute")
	}
	var r goStreamResult
	if r.Conns, err = procstat.ConnsTo(0, addr); err != nil {
		t.Fatal(err)
	}
	r.Channels = p.Size()
	n0, t0 := done.Load(), time.Now()
	time.Sleep(measure) // the measured interval, not a synchronisation
	r.RPS = int(float64(done.Load()-n0) / time.Since(t0).Seconds())
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("call: %v", err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "rpclab.pool.resizes" {
				for _, dp := range sum.DataPoints {
					r.Resizes += int(dp.Value)
				}
			}
		}
	}
	return r
}
