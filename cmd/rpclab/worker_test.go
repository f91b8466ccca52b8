// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/driver"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/verdict"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

func TestWorkerBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"port out of range", []string{"worker", "--driver-port", "70000"}, "--driver-port"},
		{"negative dial timeout", []string{"worker", "--driver-port", "0", "--dial-timeout", "-1s"}, "--dial-timeout"},
		{"arguments", []string{"worker", "extra"}, "extra"},
		{"negative setup timeout", []string{"worker", "--driver-port", "0", "--setup-timeout", "-1s"}, "--setup-timeout"},
		{"memory budget not a size", []string{"worker", "--driver-port", "0", "--memory-budget", "lots"}, "--memory-budget"},
		{"memory budget zero", []string{"worker", "--driver-port", "0", "--memory-budget", "0"}, "--memory-budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d naming %s", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// TestWorkerProcessQuits runs "rpclab worker" as a process: with no --host
// it listens on loopback only, it prints its address, answers a driver as
// an rpclab worker, and QuitWorker ends it with exit 0.
func TestWorkerProcessQuits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	cmd := rpclabCmd(ctx, "worker", "--driver-port", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		cmd.Process.Kill()
		t.Fatalf("got first line %q (%v), want \"listening on ADDR\"", line, err)
	}
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Errorf("got the worker listening on %s with no --host, want 127.0.0.1 (loopback)", addr)
	}
	r, err := driver.Dial(ctx, addr, 5*time.Second)
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	defer r.Close()
	if !r.RPCLab {
		t.Error("got an official worker, want rpclab's (WorkerDetail)")
	}
	if err := r.Quit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after QuitWorker: got %v, want exit 0", err)
	}
}

// workerProcess starts "rpclab worker" as a process until the test ends
// and returns its address and the process.
func workerProcess(t *testing.T, ctx context.Context) (string, *exec.Cmd) {
	t.Helper()
	cmd := rpclabCmd(ctx, "worker", "--driver-port", "0", "--host", "127.0.0.1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("got first line %q (%v), want \"listening on ADDR\"", line, err)
	}
	return addr, cmd
}

// TestSweepOnWorkerProcesses runs rpclab sweep --workers on two rpclab
// worker processes: one record per step, the merged count the sum of the
// workers', the merged histogram the merge of theirs, and each worker's
// connections counted by its own process (pool:2 each, 4 in all).
func TestSweepOnWorkerProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	target := bidiTarget(t)
	sw := sweepOnTwoWorkers(t, ctx, target, 1, "--conn", "pool:2", "--inflight", "5", "--warmup", "100ms", "--interval", "400ms")
	a, b, recs, stdout := sw.a, sw.b, sw.recs, sw.stdout
	rec := recs[0]
	if err := result.Validate(mustJSON(t, rec)); err != nil {
		t.Errorf("the record does not validate: %v", err)
	}
	all := stats.Merge().Hist
	var sum int64
	for _, w := range rec.Workers {
		h, err := stats.DecodeHistogram(w.HistogramHDR)
		if err != nil {
			t.Fatal(err)
		}
		all.Merge(h)
		sum += w.Requests
		if w.ConnsObserved != 2 {
			t.Errorf("%s: got %d connections, want 2 (pool:2, counted in its own process)", w.Addr, w.ConnsObserved)
		}
	}
	got, err := stats.DecodeHistogram(rec.HistogramHDR)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Requests != sum || sum == 0 || got.TotalCount() != all.TotalCount() || rec.Latency != stats.Quantiles(all) || rec.ConnsObserved != 4 {
		t.Errorf("got %d requests, histogram of %d, conns %d; want the sum %d, the merge %d, 4", rec.Requests, got.TotalCount(), rec.ConnsObserved, sum, all.TotalCount())
	}
	if rec.Workers[0].Inflight != 3 || rec.Workers[1].Inflight != 2 {
		t.Errorf("got shares %d and %d, want 3 and 2", rec.Workers[0].Inflight, rec.Workers[1].Inflight)
	}
	for _, w := range []string{a, b} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout does not show worker %s:\n%s", w, stdout)
		}
	}
}

// TestSweepOnWorkersVerdict: a sweep on workers over shared and
// per-worker prints the verdict a one-machine sweep prints for the same
// records (verdict.Text of the records it wrote), and the worker table.
func TestSweepOnWorkersVerdict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	target := bidiTarget(t)
	sw := sweepOnTwoWorkers(t, ctx, target, 4, "--conn", "shared,per-worker", "--inflight", "1,4", "--warmup", "50ms", "--interval", "250ms")
	a, recs, stdout := sw.a, sw.recs, sw.stdout
	vs := verdict.Verdicts(recs)
	if len(vs) == 0 {
		t.Fatalf("no verdict from the records: %+v", recs)
	}
	if want := verdict.Text(vs); !strings.Contains(stdout, want) {
		t.Errorf("stdout does not hold the verdict %q:\n%s", want, stdout)
	}
	if !strings.Contains(stdout, a) {
		t.Errorf("stdout does not show the worker table (worker %s):\n%s", a, stdout)
	}
	// The HTML report of the records is rpclab report's, as for any sweep.
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := runInProcess("report", sw.out, "-o", html); code != exitOK {
		t.Errorf("rpclab report of the records: got exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), verdict.Text(vs)[:40]) {
		t.Errorf("the HTML report does not hold the verdict %q (%v)", verdict.Text(vs)[:40], err)
	}
}

// TestSweepWorkerUnreachable: an unreachable worker is named, exit 1,
// nothing run (no record written).
func TestSweepWorkerUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	a, _ := workerProcess(t, ctx)
	dead := testutil.ClosedAddr(t)
	out := filepath.Join(t.TempDir(), "w.jsonl")
	code, _, stderr := runInProcess("sweep", "--workers", a+","+dead, "--target", bidiTarget(t), "--inflight", "2",
		"--warmup", "0s", "--interval", "200ms", "--dial-timeout", "500ms", "-o", out)
	if code != exitFailure || !strings.Contains(stderr, dead) || !strings.Contains(stderr, "nothing was run") {
		t.Errorf("got exit %d, %q; want exit %d naming %s", code, stderr, exitFailure, dead)
	}
	if b, _ := os.ReadFile(out); len(b) != 0 {
		t.Errorf("got records %q, want none", b)
	}
}

// TestSweepWorkerKilled: a worker process killed during the first step
// leaves that step and the next partial (the survivor's figures), the
// sweep runs both steps, and rpclab exits 1.
func TestSweepWorkerKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	a, aMarks := markedWorker(t)
	b, bp := workerProcess(t, ctx)
	// Kill b once a's first step has begun measuring (a answered its
	// mark): b was running that step (the driver starts every worker
	// before it marks any), and a goes on measuring it.
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for aMarks.answered.Load() == 0 && ctx.Err() == nil {
			<-tick.C
		}
		bp.Process.Kill()
	}()
	out := filepath.Join(t.TempDir(), "w.jsonl")
	code, _, stderr := runInProcess("sweep", "--workers", a+","+b, "--target", bidiTarget(t), "--conn", "shared", "--inflight", "2,4",
		"--warmup", "100ms", "--interval", "600ms", "-o", out)
	if code != exitFailure {
		t.Errorf("got exit %d, want %d: %s", code, exitFailure, stderr)
	}
	recs, err := result.ReadFile(out)
	if err != nil || len(recs) != 2 {
		t.Fatalf("got %d records (%v), want 2", len(recs), err)
	}
	for i, rec := range recs {
		if !rec.Partial || rec.Workers[1].Status != "lost" || rec.Requests == 0 || !strings.Contains(rec.Error, b) {
			t.Errorf("step %d: got partial %v, worker 2 %s, %d requests, error %q; want partial, lost, the survivor's, naming %s", i+1, rec.Partial, rec.Workers[1].Status, rec.Requests, rec.Error, b)
		}
	}
}

func TestSweepWorkersBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"sweep", "--workers", "127.0.0.1:1"}, "--target"},
		{"not host:port", []string{"sweep", "--workers", "nohost", "--target", "127.0.0.1:1"}, "--workers"},
		{"rps 0", []string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:1", "--rps", "0"}, "--rps"},
		{"arrival without rps", []string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:1", "--arrival", "poisson"}, "--arrival"},
		{"unknown arrival", []string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:1", "--rps", "100", "--arrival", "uniform"}, "--arrival"},
		{"open loop pacing", []string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:1", "--rps", "100", "--pacing", "timer"}, "--pacing"},
		{"netem", []string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:1", "--delay", "1ms"}, "--delay"},
		{"bad conn", []string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:1", "--conn", "pool:0"}, "--conn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d naming %s", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

func mustJSON(t *testing.T, rec result.Record) []byte {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSweepWorkersCtrlC: Ctrl-C during a step keeps its record
// (interrupted, with what was measured), ends every worker's run (each
// takes a new client at once) and exits 130.
func TestSweepWorkersCtrlC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	target, served := countingTarget(t)
	a, aMarks := markedWorker(t)
	b, bMarks := markedWorker(t)
	out := filepath.Join(t.TempDir(), "w.jsonl")
	const inflight = 2 // the first step's, over both workers
	cmd := rpclabCmd(ctx, "sweep", "--workers", a+","+b, "--target", target, "--conn", "shared", "--inflight", "2,4",
		"--warmup", "100ms", "--interval", "30s", "-o", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the first step has measured RPCs: both workers
	// answered the mark that began its interval, then the target received
	// more than inflight+1 RPCs, so some caller sent two since, and the
	// first of those ended (a closed loop sends after each reply) inside
	// the interval.
	waitFor(t, ctx, "both workers' first mark", func() bool { return aMarks.answered.Load() > 0 && bMarks.answered.Load() > 0 })
	since := served.Load()
	waitFor(t, ctx, "RPCs in the interval", func() bool { return served.Load() > since+inflight+1 })
	if recs, _ := result.ReadFile(out); len(recs) > 0 {
		t.Fatal("a record before the interrupt")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
		t.Errorf("got %v, want exit %d", err, exitInterrupted)
	}
	recs, err := result.ReadFile(out)
	if err != nil || len(recs) != 1 || recs[0].Status != result.StatusInterrupted || recs[0].Requests == 0 {
		t.Fatalf("got %d records (%v), want 1 interrupted with what was measured", len(recs), err)
	}
	for _, w := range []string{a, b} {
		r, err := driver.Dial(ctx, w, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		run, err := r.StartClient(ctx, &pb.ClientConfig{ServerTargets: []string{target}, ClientChannels: 1, OutstandingRpcsPerChannel: 1})
		if err != nil {
			t.Fatalf("%s after Ctrl-C: %v (its run was not ended)", w, err)
		}
		run.Close(ctx)
	}
}

// TestSweepOpenOnWorkerProcesses runs rpclab sweep --workers --rps 200 on
// two rpclab worker processes: an open-loop record (load_model open,
// rate_rps 200, arrival constant, rpclab's default) that validates, the
// rate split 100 + 100 and stated per worker, the merged count the sum of
// the workers', and about the rate over each worker's interval (a loose
// bound: counts, not timing).
func TestSweepOpenOnWorkerProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	target := bidiTarget(t)
	sw := sweepOnTwoWorkers(t, ctx, target, 1, "--rps", "200", "--inflight", "4", "--conn", "shared", "--warmup", "300ms", "--interval", "500ms")
	if !strings.Contains(sw.stderr, "rate split evenly") {
		t.Errorf("stderr does not state the rate split:\n%s", sw.stderr)
	}
	recs := sw.recs
	rec := recs[0]
	if err := result.Validate(mustJSON(t, rec)); err != nil {
		t.Errorf("the record does not validate: %v", err)
	}
	if rec.Spec.LoadModel != "open" || rec.Spec.RateRPS != 200 || rec.Spec.Arrival != "constant" {
		t.Errorf("got load_model %q, rate_rps %v, arrival %q; want open, 200, constant", rec.Spec.LoadModel, rec.Spec.RateRPS, rec.Spec.Arrival)
	}
	var sum int64
	var want float64
	for _, w := range rec.Workers {
		if w.RateRPS != 100 || w.Inflight != 2 {
			t.Errorf("%s: got rate_rps %v, inflight %d; want 100, 2", w.Addr, w.RateRPS, w.Inflight)
		}
		sum += w.Requests
		want += w.RateRPS * time.Duration(w.DurationNS).Seconds()
	}
	if rec.Requests != sum || float64(sum) < want/2 || float64(sum) > want*1.5 {
		t.Errorf("got %d requests, the workers' sum %d; want the sum, within 50%% of %.0f", rec.Requests, sum, want)
	}
}

// officialStandIn is a WorkerService that answers CoreCount only and has
// no WorkerDetail: to the driver, an official worker, enough to be refused
// before anything runs.
type officialStandIn struct {
	pb.UnimplementedWorkerServiceServer
}

func (officialStandIn) CoreCount(context.Context, *pb.CoreRequest) (*pb.CoreResponse, error) {
	return &pb.CoreResponse{Cores: 1}, nil
}

// TestSweepOpenConstantOnOfficialWorker: constant arrivals (the default
// of --rps) on an official worker, whose open loop is Poisson only, are
// refused with exit 2 naming --arrival and the worker, nothing run.
func TestSweepOpenConstantOnOfficialWorker(t *testing.T) {
	s := grpc.NewServer()
	pb.RegisterWorkerServiceServer(s, officialStandIn{})
	addr := testutil.Serve(t, s)
	code, _, stderr := runInProcess("sweep", "--workers", addr, "--target", "127.0.0.1:1", "--rps", "100", "--warmup", "0s", "--interval", "100ms")
	if code != exitUsage || !strings.Contains(stderr, "--arrival") || !strings.Contains(stderr, addr) || !strings.Contains(stderr, "nothing was run") {
		t.Errorf("got exit %d and %q, want exit %d naming --arrival and %s", code, stderr, exitUsage, addr)
	}
}

// workerSweep is what sweepOnTwoWorkers ran and got.
type workerSweep struct {
	a, b           string // the workers' addresses
	out            string // the records file
	recs           []result.Record
	stdout, stderr string
}

// sweepOnTwoWorkers starts two rpclab worker processes and runs rpclab
// sweep --workers on them against target with args and -o; the test stops
// unless the sweep exits OK and wrote want records.
func sweepOnTwoWorkers(t *testing.T, ctx context.Context, target string, want int, args ...string) workerSweep {
	t.Helper()
	a, _ := workerProcess(t, ctx)
	b, _ := workerProcess(t, ctx)
	out := filepath.Join(t.TempDir(), "w.jsonl")
	code, stdout, stderr := runInProcess(append([]string{"sweep", "--workers", a + "," + b, "--target", target, "-o", out}, args...)...)
	if code != exitOK {
		t.Fatalf("got exit %d: %s", code, stderr)
	}
	recs, err := result.ReadFile(out)
	if err != nil || len(recs) != want {
		t.Fatalf("got %d records (%v), want %d", len(recs), err, want)
	}
	return workerSweep{a: a, b: b, out: out, recs: recs, stdout: stdout, stderr: stderr}
}
