// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/benchwire"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// requireOfficial makes a missing official worker (no go tool, no module
// proxy) a failure instead of a skip.
const requireOfficial = "RPCLAB_REQUIRE_OFFICIAL_WORKER"

// officialWorker builds grpc-go's own benchmark worker
// (google.golang.org/grpc/benchmark/worker) at the grpc version of
// rpclab's go.mod, from the module cache, into the user cache directory
// (built once per version), and returns its path.
func officialWorker(t *testing.T, ctx context.Context) string {
	// ctx bounds go list; the build has its own, longer bound.
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv(requireOfficial) == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (set "+requireOfficial+"=1 to make this a failure)", args...)
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		skip("grpc-go's worker: no go tool to build it: %v", err)
	}
	out, err := exec.CommandContext(ctx, gotool, "list", "-m", "-f", "{{.Version}} {{.Dir}}", "google.golang.org/grpc").Output()
	ver, dir, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if err != nil || !ok || dir == "" {
		skip("grpc-go's worker: go list -m google.golang.org/grpc: %q, %v", out, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "rpclab", "grpc-go-benchmark-worker-"+ver)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	// The first build fetches grpc's test dependencies and takes about a
	// minute on a loaded 2-core machine: it gets its own bound.
	bctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(bctx, gotool, "build", "-o", tmp, "./benchmark/worker")
	build.Dir = dir // grpc's own module, with its own go.sum
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false")
	if b, err := build.CombinedOutput(); err != nil {
		skip("grpc-go's worker %s: go build ./benchmark/worker in %s: %v\n%s", ver, dir, err, b)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// startOfficial runs grpc-go's worker on a free loopback port until the
// test ends and returns its address.
func startOfficial(t *testing.T, ctx context.Context) string {
	t.Helper()
	bin := officialWorker(t, ctx)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	lis.Close()
	cmd := exec.Command(bin, "-driver_port", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// TestDriveOfficialAndRPCLabWorkers drives grpc-go's own worker and
// rpclab's in the same step with rpclab's driver code against rpclab's
// ping server: both take the same ClientConfig, answer the setup and each
// mark, count what the server answered (together at most what it
// answered), and report latencies in the same bucket geometry, which
// rpclab's Geometry reads (the official worker's min and max fall in its
// first and last non-empty buckets). Only rpclab's worker has WorkerDetail.
func TestDriveOfficialAndRPCLabWorkers(t *testing.T) {
	ctx := testutil.LongContext(t)
	offAddr := startOfficial(t, ctx)
	rlAddr, _ := startWorker(t)
	target, served := startPing(t)
	off, err := Dial(ctx, offAddr, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	rl := dial(t, ctx, rlAddr)
	if off.RPCLab || !rl.RPCLab {
		t.Fatalf("got RPCLab %v for grpc-go's worker and %v for rpclab's, want false and true", off.RPCLab, rl.RPCLab)
	}
	remotes := []*Remote{off, rl}
	runs := make([]*ClientRun, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, r := range remotes {
		wg.Go(func() { runs[i], errs[i] = r.StartClient(ctx, testutil.ClosedLoopConfig(target, 2, 2)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i := range runs {
		if _, err := runs[i].Mark(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	start := served.Load()
	waitServed(t, ctx, served, start+400)
	stats := make([]*pb.ClientStats, 2)
	for i := range runs {
		if stats[i], err = runs[i].Mark(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	end := served.Load()
	g := benchwire.Geometry{Resolution: 0.01, MaxPossible: 60e9}
	var total int64
	for i, s := range stats {
		lat := s.GetLatencies()
		n := testutil.BucketSum(lat)
		total += n
		if n < 1 || float64(n) != lat.GetCount() || len(lat.GetBucket()) != g.Buckets() || s.GetTimeElapsed() <= 0 {
			t.Errorf("%s: got %d in buckets, count %v, %d buckets, elapsed %vs; want equal counts above 0 in %d buckets", remotes[i].Addr, n, lat.GetCount(), len(lat.GetBucket()), s.GetTimeElapsed(), g.Buckets())
			continue
		}
		first, last := -1, -1
		for b, c := range lat.GetBucket() {
			if c > 0 {
				if first < 0 {
					first = b
				}
				last = b
			}
		}
		// grpc-go's worker computes a value's bucket in floating point its
		// own way; a value within rounding of a bucket's edge may land in the
		// neighbour (seen: max in 1710 here, 1709 there), so one bucket apart
		// is the same geometry, and a wrong geometry is hundreds apart.
		near := func(a, b int) bool { return a-b <= 1 && b-a <= 1 }
		if !near(g.BucketOf(lat.GetMinSeen()), first) || !near(g.BucketOf(lat.GetMaxSeen()), last) {
			t.Errorf("%s: min %v and max %v fall in buckets %d and %d, want the first and last non-empty ones (or a neighbour), %d and %d",
				remotes[i].Addr, lat.GetMinSeen(), lat.GetMaxSeen(), g.BucketOf(lat.GetMinSeen()), g.BucketOf(lat.GetMaxSeen()), first, last)
		}
	}
	if total > end {
		t.Errorf("the workers counted %d RPCs since their reset, the server answered %d in all: want at most that", total, end)
	}
	if _, err := runs[0].Detail(ctx); !errors.Is(err, ErrNoDetail) {
		t.Errorf("Detail from grpc-go's worker: got %v, want ErrNoDetail", err)
	}
	if d, err := runs[1].Detail(ctx); err != nil || d.GetRequestsByCode()["OK"] != testutil.OKCount(stats[1]) {
		t.Errorf("Detail from rpclab's worker: got %v, %v; want %d OK", d, err, testutil.OKCount(stats[1]))
	}
	for _, r := range runs {
		if err := r.Close(ctx); err != nil {
			t.Error(err)
		}
	}
}
