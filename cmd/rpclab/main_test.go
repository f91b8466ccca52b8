// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
)

// The test binary doubles as rpclab: with this variable set it runs main,
// so commands that start "rpclab serve" as a child process work in tests.
const asMain = "RPCLAB_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// rpclabCmd returns the test binary run as rpclab.
func rpclabCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	// A -race binary sleeps 1 s at exit unless told not to, which would
	// hide how long rpclab takes to stop its children.
	cmd.Env = append(os.Environ(), asMain+"=1", "GORACE=atexit_sleep_ms=0")
	return cmd
}

func runInProcess(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestBadFlagsAreUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"min above max", []string{"sweep", "--min-inflight", "8", "--max-inflight", "2"}, "--max-inflight"},
		{"pool of zero", []string{"sweep", "--conn", "pool:0"}, "--conn"},
		{"unknown conn mode", []string{"sweep", "--conn", "carrier-pigeon"}, "--conn"},
		{"negative warmup", []string{"sweep", "--warmup", "-1s"}, "--warmup"},
		{"zero interval", []string{"sweep", "--interval", "0s"}, "--interval"},
		{"unparsable list", []string{"sweep", "--inflight", "1,two,4"}, "--inflight"},
		{"unparsable duration", []string{"sweep", "--interval", "soon"}, "--interval"},
		{"both inflight forms", []string{"sweep", "--inflight", "1", "--max-inflight", "4"}, "--inflight"},
		{"unknown rpc", []string{"sweep", "--rpc", "bidi"}, "--rpc"},
		{"unknown service", []string{"sweep", "--service", "ydb"}, "--service: unknown service \"ydb\""},
		{"payload for ydb-debug", []string{"sweep", "--service", "ydb-debug", "--payload", "1KiB"}, "--payload: 1024 bytes: ydb-debug's ping has no payload"},
		{"ydb-debug from another client", []string{"sweep", "--service", "ydb-debug", "--client", "cpp"}, "--service ydb-debug: only the go client"},
		{"ydb-debug with --call", []string{"sweep", "--service", "ydb-debug", "--rps", "10", "--call", "a.B/C"}, "--service ydb-debug and --call are exclusive"},
		{"zero max outstanding", []string{"sweep", "--rps", "100", "--max-outstanding", "0"}, "--max-outstanding"},
		{"target without port", []string{"sweep", "--target", "127.0.0.1"}, "--target"},
		{"target port out of range", []string{"sweep", "--target", "127.0.0.1:99999"}, "--target"},
		{"unknown flag", []string{"sweep", "--turbo"}, "turbo"},
		{"unknown client", []string{"sweep", "--client", "cobol"}, "--client"},
		{"demo too", []string{"demo", "--conn", "pool:-1"}, "--conn"},
		{"serve args", []string{"serve", "extra"}, "unexpected arguments"},
		{"nested command args", []string{"netem", "selftest", "extra"}, "extra"},
		{"payload far too large", []string{"sweep", "--payload", "10GB"}, `--payload: "10GB" is not a payload size`},
		{"payload not a size", []string{"sweep", "--payload", "lots"}, `--payload: "lots" is not a payload size`},
		{"payload above gRPC's message limit", []string{"sweep", "--payload", "5MiB"}, "--payload: 5242880 is outside"},
		{"payload negative", []string{"sweep", "--payload", "-1"}, `--payload: "-1" is not a payload size`},
		{"serve unknown impl", []string{"serve", "--impl", "java"}, "--impl"},
		{"serve negative delay", []string{"serve", "--delay", "-1ms"}, "--delay -1ms: want 0 to 10s"},
		{"serve delay too long", []string{"serve", "--delay", "1m"}, "--delay 1m0s: want 0 to 10s"},
		{"serve delay for cpp", []string{"serve", "--impl", "cpp", "--delay", "2ms"}, "--delay"},
		{"serve go flag for cpp", []string{"serve", "--impl", "cpp", "--num-stream-workers", "2"}, "--num-stream-workers"},
		{"compare with --client", []string{"compare", "--client", "java"}, "--client"},
		{"compare open loop", []string{"compare", "--rps", "100"}, "--rps"},
		{"compare unknown client", []string{"compare", "--clients", "go,cobol"}, "--clients"},
		{"compare layout no client has", []string{"compare", "--clients", "go,java", "--conn", "shared,local-pool"}, "local-pool"},
		{"compare bad pool for go", []string{"compare", "--clients", "go", "--conn", "pool:0"}, "--conn"},
		{"compare no clients", []string{"compare", "--clients", ""}, "--clients"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d and a message naming %s", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

func TestUnreachableTarget(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	start := time.Now()
	code, _, stderr := runInProcess("sweep", "--target", testutil.ClosedAddr(t), "--inflight", "1,2", "--conn", "shared",
		"--warmup", "0s", "--interval", "200ms", "--dial-timeout", "500ms", "-o", out)
	if code != exitFailure {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitFailure, stderr)
	}
	if !strings.Contains(stderr, "target unreachable") {
		t.Errorf("stderr %q does not say the target is unreachable", stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v, want about the dial timeout", d)
	}
	recs, err := result.ReadFile(out)
	if err != nil || len(recs) != 2 || recs[0].Status != result.StatusFailed {
		t.Errorf("want 2 failed records, got %d (%v)", len(recs), err)
	}
}

// TestDemoEndToEnd runs the demo as a user would (with short steps): it
// starts its own server as a child process and ends with a verdict.
func TestDemoEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	dir := t.TempDir()
	cmd := rpclabCmd(ctx, "demo", "--inflight", "1,4", "--warmup", "100ms", "--interval", "500ms")
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v; stderr:\n%s", err, e.String())
	}
	stdout := o.String()
	for _, want := range []string{"throughput (req/s)", "efficiency %", "other cpu %", "per-worker", "shared connection"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	recs, err := result.ReadFile(filepath.Join(dir, "rpclab-results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("got %d records, want 4", len(recs))
	}
	for _, r := range recs {
		want := 1
		if r.Spec.ConnMode == "per-worker" {
			want = r.Spec.Inflight
		}
		if r.ConnsObserved != want || r.Status != result.StatusOK || r.Spec.Server != "go" {
			t.Errorf("%s inflight=%d: conns %d (want %d), status %s, server %q", r.Spec.ConnMode, r.Spec.Inflight, r.ConnsObserved, want, r.Status, r.Spec.Server)
		}
		// The demo pins its server apart (2 CPUs or more): the record
		// carries the host's CPU on the client's CPUs and the server's.
		if h := r.HostCPU; runtime.GOOS == "linux" && runtime.NumCPU() >= 2 && (h == nil || h.Server == nil || len(h.Client.CPUs) == 0) {
			t.Errorf("%s inflight=%d: got host_cpu %+v, want the client's and the server's CPUs", r.Spec.ConnMode, r.Spec.Inflight, h)
		}
	}
	checkLimitScene(t, dir, stdout)
}

// checkLimitScene: the demo's second scene ran against a server that
// allows one stream per connection and thinks 2 ms per reply, so one
// shared connection carried at most 500 RPCs a second (a bound the
// server's timer guarantees, whatever the host), each pool had its
// connections as the kernel saw them, and the scene said what it is.
func checkLimitScene(t *testing.T, dir, stdout string) {
	t.Helper()
	if want := "a server or proxy that allows few streams per connection"; !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout)
	}
	recs, err := result.ReadFile(filepath.Join(dir, "rpclab-results-limit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(limitInflight)*len(limitConns) {
		t.Fatalf("got %d records of the limit scene, want %d", len(recs), len(limitInflight)*len(limitConns))
	}
	for _, r := range recs {
		want := 1
		if n, ok := strings.CutPrefix(r.Spec.ConnLabel(), "pool:"); ok {
			want, _ = strconv.Atoi(n)
		}
		if r.Status != result.StatusOK || r.ConnsObserved != want {
			t.Errorf("%s inflight=%d: status %s, conns %d; want ok and %d", r.Spec.ConnLabel(), r.Spec.Inflight, r.Status, r.ConnsObserved, want)
		}
		// 1.1x: the interval's ends are read a little apart from the RPCs.
		if bound := 1.1 * float64(want) * 500; r.ThroughputRPS > bound {
			t.Errorf("%s inflight=%d: %.0f req/s, above the %.0f that %d connections of one stream and 2 ms each allow",
				r.Spec.ConnLabel(), r.Spec.Inflight, r.ThroughputRPS, bound, want)
		}
	}
}

var pidRe = regexp.MustCompile(`started server \S+ \(pid (\d+)\)`)

// startSweep runs a three-step sweep of long steps as a child rpclab,
// reads its stderr up to the line saying step 2 started, and returns the
// command, the child server's pid and the rest of stderr (read into a
// buffer until the command ends).
func startSweep(t *testing.T, ctx context.Context, out string) (cmd *exec.Cmd, serverPid int, rest *bytes.Buffer, restDone chan struct{}) {
	t.Helper()
	// A long dial timeout: on a loaded machine the pinned child server can
	// take seconds to answer its first connection, and step 1 must be ok.
	cmd = rpclabCmd(ctx, "sweep", "--inflight", "1,2,4", "--conn", "shared", "--warmup", "0s", "--interval", "1s",
		"--dial-timeout", "30s", "-o", out)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		if m := pidRe.FindStringSubmatch(line); m != nil {
			serverPid, _ = strconv.Atoi(m[1])
		}
		if strings.HasPrefix(line, "[2/3]") && strings.HasSuffix(line, "started") {
			break
		}
	}
	if serverPid == 0 {
		t.Fatal("no server pid on stderr, or no step 2")
	}
	rest, restDone = &bytes.Buffer{}, make(chan struct{})
	go func() {
		defer close(restDone)
		for sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
		}
	}()
	return cmd, serverPid, rest, restDone
}

// TestInterruptKeepsRecordsAndStopsServer sends SIGINT as the second step
// of a sweep starts: rpclab must stop (within the test's deadline; no
// duration is asserted), exit 130, keep step 1's record and step 2's marked interrupted,
// run no step 3, and stop its child server.
func TestInterruptKeepsRecordsAndStopsServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	cmd, serverPid, _, restDone := startSweep(t, ctx, out)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// No duration is asserted (a busy machine may take its time); a
	// sweep that does not stop is killed at ctx's deadline and fails the
	// exit code below.
	<-restDone
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want code %d", err, exitInterrupted)
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Status != result.StatusOK || recs[1].Status != result.StatusInterrupted || recs[1].Spec.Inflight != 2 {
		for _, r := range recs {
			t.Logf("record: inflight=%d %s %s", r.Spec.Inflight, r.Status, r.Error)
		}
		t.Fatalf("got %d records, want step 1 ok and step 2 (inflight 2) interrupted", len(recs))
	}
	// The child server must be gone (reaped, so kill(pid, 0) fails):
	// polled, as no event says so, until ctx's deadline.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for syscall.Kill(serverPid, 0) == nil {
		select {
		case <-ctx.Done():
			t.Fatalf("server pid %d still runs after rpclab exited", serverPid)
		case <-tick.C:
		}
	}
}

// TestKilledServerEndsTheSweep kills sweep's own child server with SIGKILL
// as step 2 starts: the sweep must end at once (not wait out the dial
// timeout of a next step), exit 1 naming the signal, and keep step 2 as
// failed with the server's exit status; no step 3 runs.
func TestKilledServerEndsTheSweep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	cmd, serverPid, rest, restDone := startSweep(t, ctx, out)
	if err := syscall.Kill(serverPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// A sweep that waited out step 3's dial timeout (30 s, startSweep)
	// would still run at ctx's deadline and be killed: the exit code
	// below tells, with no duration asserted.
	<-restDone
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Fatalf("exit: %v, want code %d; stderr:\n%s", err, exitFailure, rest)
	}
	if !strings.Contains(rest.String(), "signal: killed") || strings.Contains(rest.String(), "[3/3]") {
		t.Errorf("stderr does not name the signal, or step 3 ran:\n%s", rest)
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Status != result.StatusOK || recs[1].Status != result.StatusFailed ||
		!strings.Contains(recs[1].Error, "signal: killed") || recs[1].Spec.Inflight != 2 {
		for _, r := range recs {
			t.Logf("record: inflight=%d %s %s", r.Spec.Inflight, r.Status, r.Error)
		}
		t.Fatalf("got %d records, want step 1 ok and step 2 (inflight 2) failed naming signal: killed", len(recs))
	}
}

func TestServePrintsAddressAndStopsOnSIGTERM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	cmd := rpclabCmd(ctx, "serve", "--listen", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on 127.0.0.1:") {
		t.Fatalf("first line %q (%v), want \"listening on 127.0.0.1:PORT\"", line, err)
	}
	addr := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial the printed address: %v", err)
	}
	c.Close()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v, want exit 0", err)
	}
}

func TestValidatePicksTheSchemaByKind(t *testing.T) {
	files := []string{"../../docs/img/demo-results.jsonl", "../../docs/img/bulk-results.jsonl", "../../testdata/results/go-sweep.jsonl",
		"../../docs/img/compare-results.jsonl", "../../docs/img/pool-results.jsonl", "../../docs/img/rtt0-rtt5-results.jsonl",
		"../../internal/result/testdata/flow.jsonl"}
	for _, g := range []string{"../../docs/img/*.jsonl", "../../testdata/results/*.jsonl", "../../internal/result/testdata/*.jsonl"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...) // every committed record file, of every kind
	}
	for _, f := range files {
		if code, out, stderr := runInProcess("validate", f); code != exitOK || !strings.Contains(out, "records ok") {
			t.Errorf("validate %s: exit %d, %q %q", f, code, out, stderr)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"schema_version":1,"kind":"ping"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runInProcess("validate", bad); code != exitFailure || !strings.Contains(stderr, "line 1") {
		t.Errorf("validate of a bad record: exit %d, stderr %q; want 1 naming line 1", code, stderr)
	}
}

// TestCompareGoesOnWithoutAClientThatDoesNotBuild: rpclab compare with a
// client whose build fails leaves it out, measures the others, writes
// their records and report, and exits 1 naming the one left out.
func TestCompareGoesOnWithoutAClientThatDoesNotBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	dir := t.TempDir()
	clients := filepath.Join(dir, "clients")
	if err := os.MkdirAll(filepath.Join(clients, "rust"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clients, "rust", "build.sh"), []byte("echo 'cargo: no such toolchain' >&2; exit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := rpclabCmd(ctx, "compare", "--clients", "go,rust", "--clients-dir", clients, "--inflight", "1,2",
		"--warmup", "100ms", "--interval", "300ms", "-o", "c.jsonl", "--report", "c.html")
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Fatalf("compare: %v, want exit %d; stderr:\n%s", err, exitFailure, e.String())
	}
	for _, want := range []string{"leaving out the rust client", "cargo: no such toolchain"} {
		if !strings.Contains(e.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, e.String())
		}
	}
	recs, err := result.ReadFile(filepath.Join(dir, "c.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("got %d records, want the go client's 4", len(recs))
	}
	for _, r := range recs {
		if r.Env.Language != "go" || r.Status != result.StatusOK {
			t.Errorf("record of %s: %s %s", r.Env.Language, r.Status, r.Error)
		}
	}
	if !strings.Contains(o.String(), "req/s @2") {
		t.Errorf("stdout lacks the client table:\n%s", o.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "c.html")); err != nil {
		t.Errorf("no report: %v", err)
	}
}
