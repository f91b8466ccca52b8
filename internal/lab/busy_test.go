// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/verdict"
)

// With this variable set the test binary is a CPU hog: it spins on one
// thread until it is killed, or for testutil.LongTimeout at most.
const asHog = "LAB_TEST_AS_HOG"

func hog() {
	runtime.GOMAXPROCS(1)
	end := time.Now().Add(testutil.LongTimeout)
	for time.Now().Before(end) {
	}
	os.Exit(0)
}

// startHogs starts one hog pinned to each of cpus, ended with ctx or when
// the test ends.
func startHogs(t *testing.T, ctx context.Context, cpus []int) {
	for _, c := range cpus {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), asHog+"=1", asServer+"=0")
		cmd.SysProcAttr = procstat.DieWithParent(nil)
		if pinned, err := procstat.StartPinned(cmd, []int{c}); err != nil || !pinned {
			t.Fatalf("start a hog on CPU %d: pinned %v, %v", c, pinned, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}

// TestBusyHostVerdict runs a short sweep (shared, in-flight 1 and 4,
// 300 ms steps) against the child server pinned apart from the client,
// first as it is, then beside a CPU hog pinned to each of the client's
// CPUs: beside the hogs the verdict is busy-host, naming the client's
// CPUs; without them it is not, unless other processes of this machine
// took those CPUs by themselves, which the test then says and skips.
func TestBusyHostVerdict(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/stat and pinning are Linux's")
	}
	cpus, err := procstat.AllowedCPUs()
	if err != nil || len(cpus) < 2 {
		t.Skipf("needs 2 CPUs to pin client and server apart (got %v, %v)", cpus, err)
	}
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { // the session pinned this process; the next test is not
		_ = procstat.Pin(0, cpus)
		runtime.GOMAXPROCS(procs)
	})
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	s, err := New(WithServer(testServer(t)), WithPin(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s.ClientCPUs) == 0 || len(s.ServerCPUs) == 0 {
		t.Fatalf("got client CPUs %v, server CPUs %v; want both pinned", s.ClientCPUs, s.ServerCPUs)
	}
	shared, err := loadgen.ParseConnMode("shared")
	if err != nil {
		t.Fatal(err)
	}
	client := Client{Name: "go", Conns: []string{"shared"}, LoadModel: "closed",
		Spec: loadgen.Spec{RPCs: []string{loadgen.Unary}, Conns: []loadgen.ConnMode{shared}, Inflight: []int{1, 4},
			Warmup: 100 * time.Millisecond, Interval: 300 * time.Millisecond, DialTimeout: 5 * time.Second},
		Sweep: func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
			return loadgen.Sweep(ctx, spec, loadgen.Options{ClientCPUs: s.ClientCPUs, ServerCPUs: s.ServerCPUs}, sink, prog)
		}}
	sweep := func() (verdict.Verdict, []result.Record) {
		t.Helper()
		recs, err := s.Run(ctx, []Client{client}, false)
		if err != nil {
			t.Fatal(err)
		}
		vs := verdict.Verdicts(recs)
		if len(vs) != 1 {
			t.Fatalf("got %d verdicts on %d records, want 1", len(vs), len(recs))
		}
		return vs[0], recs
	}

	quiet, quietRecs := sweep()
	hogCtx, stopHogs := context.WithCancel(ctx)
	startHogs(t, hogCtx, s.ClientCPUs)
	busy, _ := sweep()
	stopHogs()

	if busy.Kind != verdict.BusyHost || busy.Busy == nil || !strings.HasPrefix(busy.Text, "Other processes took") {
		t.Fatalf("beside the hogs: got %s: %q; want busy-host, said first", busy.Kind, busy.Text)
	}
	found := false
	for _, o := range busy.Busy.CPUs {
		if o.Whose == "the client's" && o.Share > verdict.OtherWorkShare {
			found = true
		}
	}
	if !found || !strings.Contains(busy.Text, "(the client's)") {
		t.Errorf("beside the hogs: got %+v: %q; want the client's CPUs named, above %g", busy.Busy.CPUs, busy.Text, verdict.OtherWorkShare)
	}
	t.Logf("beside the hogs: %s", busy.Text)

	most := 0.0
	for i := range quietRecs {
		share, _ := verdict.OtherShare(&quietRecs[i])
		most = max(most, share)
	}
	if most > verdict.OtherWorkShare {
		t.Skipf("without the hogs, other processes of this machine took %.0f%% of the run's CPUs by themselves (above %.0f%%): the quiet half cannot be judged here", 100*most, 100*verdict.OtherWorkShare)
	}
	if quiet.Kind == verdict.BusyHost || quiet.Busy != nil {
		t.Errorf("without the hogs (other work %.0f%% at most): got %s: %q; want no busy host", 100*most, quiet.Kind, quiet.Text)
	}
}
