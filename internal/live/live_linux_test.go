// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// dialN opens n connections to addr, each carrying one RPC.
func dialN(t *testing.T, addr string, n int) {
	t.Helper()
	ctx := testutil.Context(t)
	for range n {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		if _, err := pb.NewBenchmarkServiceClient(cc).UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: 1000}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSampleCountsConnections: the connections a window reports to a
// target are the kernel's count (procstat's own sock_diag count), with
// their traffic, and the process's listening port is listed.
func TestSampleCountsConnections(t *testing.T) {
	ctx := testutil.Context(t)
	addr, _ := testserver.CountingPing(t)
	dialN(t, addr, 3)
	s, err := Open(ctx, os.Getpid(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dialN(t, addr, 1) // moves bytes on a fourth connection within the window
	if err := s.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	r := s.Record(result.StatusOK)
	if err := result.Check(r); err != nil {
		t.Fatal(err)
	}
	want, err := procstat.ConnsTo(os.Getpid(), addr)
	if err != nil {
		t.Fatal(err)
	}
	got, moved := 0, uint64(0)
	for _, c := range r.Conns {
		if c.Remote == addr {
			got++
			moved += c.BytesReceived
		}
	}
	if got != want || got != 4 {
		t.Errorf("window saw %d connections to %s, the kernel %d, want 4", got, addr, want)
	}
	if moved < 1000 {
		t.Errorf("%d bytes received over the window, want at least the 1000-byte reply", moved)
	}
	listening := strings.Join(r.Listening, " ")
	if !strings.Contains(listening, addr) {
		t.Errorf("listening %q, want it to hold the server's %s", listening, addr)
	}
	if r.Process.Stack != result.StackGo || !strings.HasPrefix(r.Process.StackDetail, "google.golang.org/grpc") {
		t.Errorf("stack %q (%q), want grpc-go", r.Process.Stack, r.Process.StackDetail)
	}
	if r.CPU.ThreadCount < 1 || len(r.CPU.Threads) == 0 || r.CPU.AllowedCPUs <= 0 {
		t.Errorf("cpu %+v, want threads and allowed CPUs", r.CPU)
	}
}

// TestNoSuchProcess: a PID above the kernel's highest (pid_max is at most
// 2^22) is ErrNoProcess.
func TestNoSuchProcess(t *testing.T) {
	_, err := Open(testutil.Context(t), 1<<22+1, Options{})
	if !errors.Is(err, ErrNoProcess) {
		t.Fatalf("got %v, want ErrNoProcess", err)
	}
	if _, err := Open(testutil.Context(t), 0, Options{}); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("pid 0: got %v, want ErrNoProcess", err)
	}
}

// TestProcessEndsMidWindow: a process that exits between samples ends
// the window with ErrEnded; the record keeps what was sampled and says it
// ended.
func TestProcessEndsMidWindow(t *testing.T) {
	ctx := testutil.Context(t)
	cmd := exec.CommandContext(ctx, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	s, err := Open(ctx, cmd.Process.Pid, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := s.Sample(ctx); !errors.Is(err, ErrEnded) {
		t.Fatalf("sample after exit: got %v, want ErrEnded", err)
	}
	r := s.Record(result.LiveEnded)
	if r.Status != result.LiveEnded || !strings.Contains(r.Note, "ended") || r.Process.Comm != "sleep" {
		t.Errorf("record %q %q %q, want ended, a note and the process kept", r.Status, r.Note, r.Process.Comm)
	}
	if r.Process.Stack != result.StackUnknown {
		t.Errorf("sleep's stack %q, want unknown", r.Process.Stack)
	}
	if err := result.Check(r); err != nil {
		t.Error(err)
	}
}

// TestPermissionMessage: a /proc read refused names what is needed.
func TestPermissionMessage(t *testing.T) {
	err := procErr(7, "file descriptors (/proc/PID/fd)", &fs.PathError{Op: "open", Path: "/proc/7/fd", Err: fs.ErrPermission})
	if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "CAP_SYS_PTRACE") {
		t.Errorf("got %v, want ErrPermission naming root and CAP_SYS_PTRACE", err)
	}
	if os.Geteuid() == 0 {
		return // root reads every process
	}
	if _, err := Open(testutil.Context(t), 1, Options{}); !errors.Is(err, ErrPermission) {
		t.Errorf("pid 1 as a user: got %v, want ErrPermission", err)
	}
}

// TestSampleFollowsReplacedConnections: a connection closed and another
// opened between two samples, both ends in this process, which keeps as
// many descriptors (likely the same numbers): the new one is in the next
// sample and the closed one is not.
func TestSampleFollowsReplacedConnections(t *testing.T) {
	ctx := testutil.Context(t)
	lis := testutil.Listen(t)
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	// dial opens a connection and returns both its ends.
	dial := func() (net.Conn, net.Conn) {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		p := <-accepted
		t.Cleanup(func() { c.Close(); p.Close() })
		return c, p
	}
	old, oldPeer := dial()
	s, err := Open(ctx, os.Getpid(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old.Close()
	oldPeer.Close()
	fresh, _ := dial()
	if err := s.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	r := s.Record(result.StatusOK)
	last := r.Samples[len(r.Samples)-1].AtNS
	var sawFresh bool
	for _, c := range r.Conns {
		switch c.Local {
		case fresh.LocalAddr().String():
			sawFresh = c.LastNS == last
		case old.LocalAddr().String():
			if c.LastNS == last {
				t.Errorf("the closed connection (%v) is in the sample after its close", old.LocalAddr())
			}
		}
	}
	if !sawFresh {
		t.Errorf("the connection opened between samples (%v) is not in the next sample: %+v", fresh.LocalAddr(), r.Conns)
	}
}

// TestNextStaysWithinTheBudget: the wait before the next sample is the
// interval while samples are cheap for the budget, and stretches to the
// mean cost over the budget when they are not.
func TestNextStaysWithinTheBudget(t *testing.T) {
	ctx := testutil.Context(t)
	for _, tc := range []struct {
		budget  float64
		stretch bool
	}{{1, false}, {1e-9, true}} {
		s, err := Open(ctx, os.Getpid(), Options{Interval: time.Second, Budget: tc.budget})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Next(); got != time.Second {
			t.Errorf("budget %g, before a sample after Open's: Next %v, want the interval", tc.budget, got)
		}
		for range 2 {
			if err := s.Sample(ctx); err != nil {
				t.Fatal(err)
			}
		}
		cost, got := s.SampleCost(), s.Next()
		want := time.Second
		if tc.stretch {
			want = time.Duration(float64(cost) / tc.budget)
		}
		if cost <= 0 || got != want {
			t.Errorf("budget %g: mean cost %v, Next %v, want %v", tc.budget, cost, got, want)
		}
		if r := s.Record(result.StatusOK); r.SamplerCPUNS < int64(2*cost) {
			t.Errorf("budget %g: sampler CPU %v in the record, below the two samples' %v", tc.budget, time.Duration(r.SamplerCPUNS), 2*cost)
		}
		s.Close()
	}
}
