// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/server"
)

// testPoolRestart runs a pool library's restart script (argv, in dir) against
// rpclab serve, kills the server (SIGKILL) once the script says "running",
// starts a new one on the same port, tells the script, and checks what it
// prints: it recovered (200 more RPCs succeeded), every failure was
// UNAVAILABLE (the killed connections and the calls made while nothing
// listened; none hung to its deadline), and the pool has all 3 of its
// connections again as the kernel sees them.
func testPoolRestart(t *testing.T, dir string, env []string, argv ...string) {
	t.Helper()
	testPoolRestartAllowing(t, nil, dir, env, argv...)
}

// upstreamFault is a failure other than UNAVAILABLE that a stack's own
// bug gives a call in flight on the killed connection: its code, the words
// the script's sample of that code must hold, the stack's issue, and how
// many such calls may fail (the script's callers: one call each in flight).
type upstreamFault struct {
	code, words, issue string
	most               int
}

// testPoolRestartAllowing is testPoolRestart accepting the upstream faults
// given, each only with its words and at most its count.
func testPoolRestartAllowing(t *testing.T, allowed []upstreamFault, dir string, env []string, argv ...string) {
	t.Helper()
	first := serveRPCLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], first.Addr)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "running" {
		_ = cmd.Wait()
		t.Fatalf("the script did not say running (got %q); stderr:\n%s", lines.Text(), stderr.String())
	}
	first.Kill()
	second, err := server.StartProcess(ctx, []string{rpclabBin, "serve", "--listen", first.Addr}, nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = second.Stop() }()
	if _, err := stdin.Write([]byte("restarted\n")); err != nil {
		t.Fatal(err)
	}
	var last string
	for lines.Scan() {
		last = lines.Text()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %v; stderr:\n%s", argv, err, stderr.String())
	}
	var got struct {
		OK        int
		Failed    map[string]int
		Recovered bool
		Conns     int
		Redials   *int              // the channels the pool replaced, where the script reports it
		Samples   map[string]string // the first status of each code but UNAVAILABLE, where reported
	}
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		t.Fatalf("%v: %q", err, last)
	}
	for code, n := range got.Failed {
		if code == "UNAVAILABLE" {
			continue
		}
		if f, ok := upstream(allowed, code, got.Samples[code], n); ok {
			t.Logf("%d RPCs failed with %s %q: %s, allowed (at most %d)", n, code, got.Samples[code], f.issue, f.most)
			continue
		}
		t.Errorf("%d RPCs failed with %s, want UNAVAILABLE only (%s)", n, code, last)
	}
	if !got.Recovered || got.Conns != 3 {
		t.Errorf("got recovered %v and %d connections after the restart, want true and 3 (%s)", got.Recovered, got.Conns, last)
	}
	redials := "not reported"
	if got.Redials != nil {
		redials = strconv.Itoa(*got.Redials)
	}
	t.Logf("across the kill and restart: %d RPCs succeeded, failures %v, %d connections after, channels redialled: %s",
		got.OK, got.Failed, got.Conns, redials)
}

// TestPythonPoolRestart: see testPoolRestart.
func TestPythonPoolRestart(t *testing.T) {
	py := buildPython(t)
	testPoolRestart(t, filepath.Join("..", "python", "pool"), []string{"PYTHONPATH=.."}, py, "-m", "tests.restart")
}

// TestNodePoolRestart: see testPoolRestart.
func TestNodePoolRestart(t *testing.T) {
	selected(t, "node")
	build(t, "node")
	testPoolRestart(t, filepath.Join("..", "node", "pool"), nil, "node", "test/restart.js")
}

// upstream finds the allowed fault for n failures of code whose sample is
// sample.
func upstream(allowed []upstreamFault, code, sample string, n int) (upstreamFault, bool) {
	for _, f := range allowed {
		if f.code == code && strings.Contains(sample, f.words) && n <= f.most {
			return f, true
		}
	}
	return upstreamFault{}, false
}
