// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	channelzsvc "google.golang.org/grpc/channelz/service"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// queueAtStreamLimit runs, in this process, 8 callers on one connection
// to a server that allows 1 stream a connection and holds each reply
// 2 ms, until the test ends, and serves this process's channelz. It
// returns the server's and channelz's addresses once the callers have
// had replies.
func queueAtStreamLimit(t *testing.T) (target, channelz string) {
	t.Helper()
	ctx, cancel := context.WithCancel(testutil.Context(t))
	target = testutil.Serve(t, server.New(server.Options{MaxConcurrentStreams: 1, Delay: 2 * time.Millisecond}))
	cz := grpc.NewServer()
	channelzsvc.RegisterChannelzServiceToServer(cz)
	channelz = testutil.Serve(t, cz)
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	client := pb.NewBenchmarkServiceClient(cc)
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	ready.Add(8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for ctx.Err() == nil {
				_, err := client.UnaryCall(ctx, &pb.SimpleRequest{})
				if first && err == nil {
					ready.Done()
					first = false
				}
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait(); cc.Close() })
	ready.Wait()
	return target, channelz
}

// TestLiveStreamLimitKnownAnswer: attached to a Go client with 8 calls in
// flight on one connection to a server allowing 1 stream, doctor --pid
// with channelz says the calls queue at the stream limit and advises 8
// connections; without channelz (off) it says it cannot tell and names
// the study; with none given it finds channelz on the process's listening
// port; the record it writes validates and reports.
func TestLiveStreamLimitKnownAnswer(t *testing.T) {
	target, cz := queueAtStreamLimit(t)
	out := filepath.Join(t.TempDir(), "live.jsonl")
	pid := strconv.Itoa(os.Getpid())
	code, stdout, stderr := runInProcess("doctor", "--pid", pid, "--window", "2s", "--channelz", cz, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Verdict (stream-limit)", "use 8 connections", "pool.WithSize(8)", target} {
		if !strings.Contains(stdout, want) {
			t.Errorf("with channelz: no %q in\n%s", want, stdout)
		}
	}
	if code, _, stderr := runInProcess("validate", out); code != 0 {
		t.Errorf("validate: exit %d: %s", code, stderr)
	}
	html := filepath.Join(t.TempDir(), "report.html")
	if code, stdout, stderr := runInProcess("report", "-o", html, out); code != 0 {
		t.Errorf("report: exit %d: %s%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "Verdict (stream-limit)") || !strings.Contains(string(b), "time line") {
		t.Errorf("report %s: %v, want the live verdict and time line", html, err)
	}
	code, stdout, stderr = runInProcess("doctor", "--pid", pid, "--window", "1s", "--channelz", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Verdict (cannot-tell)", "rpclab doctor --target " + target, "--channelz"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("without channelz: no %q in\n%s", want, stdout)
		}
	}
	// With no --channelz, a listening port of the process that serves it
	// (cz, or another test's: channelz is the process's) is found and read.
	code, stdout, stderr = runInProcess("doctor", "--pid", pid, "--window", "2s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "channelz answers on "; !strings.Contains(stderr, want) || !strings.Contains(stdout, "Verdict (stream-limit)") {
		t.Errorf("channelz found: want %q on stderr and the stream-limit verdict; got\n%s\n%s", want, stderr, stdout)
	}
}

// TestLiveBadInput: a PID that is not a process, a bad window, a study
// flag with --pid and a channelz port that serves no channelz are usage
// errors naming their flag.
func TestLiveBadInput(t *testing.T) {
	notChannelz := testutil.Serve(t, server.New(server.Options{}))
	pid := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--pid", "4194305"}, "--pid: no such process"},
		{[]string{"--pid", "-3"}, "--pid: -3 is not a process ID"},
		{[]string{"--pid", pid, "--window", "10ms"}, "--window:"},
		{[]string{"--pid", pid, "--target", "x:1"}, "--target: not with --pid"},
		{[]string{"--pid", pid, "--channelz", notChannelz}, "--channelz: channelz: " + notChannelz + " does not serve channelz"},
	} {
		code, _, stderr := runInProcess(append([]string{"doctor"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want exit %d naming %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestLiveServerOnly: a process that only serves is said to be a server.
func TestLiveServerOnly(t *testing.T) {
	ctx := testutil.Context(t)
	cmd := rpclabCmd(ctx, "serve", "--listen", "127.0.0.1:0")
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	buf := make([]byte, 256)
	if _, err := r.Read(buf); err != nil { // the listening line: it serves
		t.Fatal(err)
	}
	code, stdout, stderr := runInProcess("doctor", "--pid", strconv.Itoa(cmd.Process.Pid), "--window", "1s")
	if code != 0 || !strings.Contains(stdout, "Verdict (server-only)") {
		t.Errorf("exit %d: %s%s", code, stdout, stderr)
	}
}

// TestLiveWatchCtrlC: --watch redraws until an interrupt, then prints the
// verdict over what it saw and exits 0.
func TestLiveWatchCtrlC(t *testing.T) {
	ctx := testutil.Context(t)
	cmd := rpclabCmd(ctx, "doctor", "--pid", strconv.Itoa(os.Getpid()), "--watch")
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := &strings.Builder{}
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), "CPU: the process") { // the first frame
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("no frame: %v: %s %s", err, out, stderr.String())
		}
		out.Write(buf[:n])
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	out.Write(rest)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v: %s", err, stderr.String())
	}
	if !strings.Contains(out.String(), "\nVerdict (") {
		t.Errorf("no verdict after Ctrl-C:\n%s", out)
	}
}

// spinChild marks the test binary run as a CPU-bound client: it holds a
// TCP connection to the address in the variable and spins one goroutine
// until its stdin closes.
const spinChild = "RPCLAB_TEST_LIVE_SPIN"

// TestLiveSpinChild is the CPU-bound client when run as spinChild; a
// no-op otherwise.
func TestLiveSpinChild(t *testing.T) {
	addr := os.Getenv(spinChild)
	if addr == "" {
		return
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var done atomic.Bool
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); done.Store(true) }()
	fmt.Println("spinning")
	for !done.Load() { // the CPU-bound work; preemption lets the reader run
	}
}

// TestLiveClientCPUKnownAnswer: a client pinned to one CPU and saturating
// it (one goroutine spinning, GOMAXPROCS 1) beside its connection wants
// all of its one CPU (used, or waited for on a shared host): doctor --pid
// says the client's CPU, not the connection.
func TestLiveClientCPUKnownAnswer(t *testing.T) {
	ctx := testutil.Context(t)
	lis := testutil.Listen(t)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			close(accepted)
			return
		}
		_, _ = c.Write([]byte("x")) // bytes on the connection
		accepted <- c
	}()
	t.Cleanup(func() {
		lis.Close()
		if c, ok := <-accepted; ok {
			c.Close()
		}
	})
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLiveSpinChild$")
	cmd.Env = append(os.Environ(), spinChild+"="+lis.Addr().String(), "GOMAXPROCS=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if pinned, err := procstat.StartPinned(cmd, []int{0}); err != nil || !pinned {
		t.Skipf("cannot start a client pinned to CPU 0: pinned %v, %v", pinned, err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "spinning\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	code, stdout, stderr := runInProcess("doctor", "--pid", strconv.Itoa(cmd.Process.Pid), "--window", "2s")
	if code != 0 || !strings.Contains(stdout, "Verdict (client-cpu)") || !strings.Contains(stdout, "1 CPUs in its affinity") {
		t.Errorf("exit %d: %s%s", code, stdout, stderr)
	}
}
