// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/doctor"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
)

// asChild marks the test binary run as a server child (testserver.Child).
const asChild = "RPCLAB_DOCTOR_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(asChild) == "1" {
		os.Exit(testserver.Child())
	}
	os.Exit(m.Run())
}

// startChild runs the test binary as a server in its own process and
// returns its address and process.
func startChild(t *testing.T) (string, *os.Process) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), asChild+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), server.ListeningPrefix)
	if err != nil || !ok {
		t.Fatalf("the child server said %q (%v)", line, err)
	}
	return addr, cmd.Process
}

// TestFindLocalServer: a target served by another process on this host
// is found by its listening socket (that process, its CPUs); one this
// process serves, or on another host, is no local server; a loopback
// port nothing listens on is a local server that cannot be read, so its
// CPU stays unknown.
func TestFindLocalServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	addr, proc := startChild(t)
	srv, err := doctor.FindLocalServer(addr)
	if err != nil || srv == nil || srv.PID != proc.Pid || srv.CPUs < 1 {
		t.Errorf("child server at %s: got %+v, %v; want pid %d", addr, srv, err, proc.Pid)
	}
	if srv, err := doctor.FindLocalServer("dns:///" + addr); err != nil || srv == nil || srv.PID != proc.Pid {
		t.Errorf("dns:///%s: got %+v, %v; want pid %d", addr, srv, err, proc.Pid)
	}
	own := testutil.Serve(t, server.New(server.Options{}))
	if srv, err := doctor.FindLocalServer(own); srv != nil || err != nil {
		t.Errorf("a server in this process: got %+v, %v; want none (its CPU is the client's figure)", srv, err)
	}
	if srv, err := doctor.FindLocalServer("192.0.2.1:443"); srv != nil || err != nil {
		t.Errorf("another host: got %+v, %v; want none", srv, err)
	}
	if srv, err := doctor.FindLocalServer(testutil.ClosedAddr(t)); srv != nil || !errors.Is(err, doctor.ErrServerUnreadable) {
		t.Errorf("a closed loopback port: got %+v, %v; want ErrServerUnreadable", srv, err)
	}
}
