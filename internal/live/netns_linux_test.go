// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
)

// nsChild marks the test binary run as a process in its own network
// namespace: it brings loopback up, connects to itself and waits.
const nsChild = "RPCLAB_LIVE_NETNS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(nsChild) == "1" {
		os.Exit(netnsChild())
	}
	os.Exit(m.Run())
}

func netnsChild() int {
	lo, err := netlink.LinkByName("lo")
	if err == nil {
		err = netlink.LinkSetUp(lo)
	}
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	c, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	s, err := lis.Accept()
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer c.Close()
	defer s.Close()
	fmt.Println("ready", lis.Addr())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the test closes stdin
	return 0
}

// TestOtherNetns: a process in another network namespace (a container's)
// is read from inside it when root: its connection to itself is seen from
// both ends, as its own kernel counts them.
func TestOtherNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a new network namespace needs root")
	}
	ctx := testutil.Context(t)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), nsChild+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start a process in a new network namespace:", err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("child: %q, %v", line, err)
	}
	addr := strings.TrimSpace(strings.TrimPrefix(line, "ready "))
	s, err := Open(ctx, cmd.Process.Pid, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Record(result.StatusOK)
	to, from := 0, 0
	for _, c := range r.Conns {
		if c.Remote == addr {
			to++
		}
		if c.Local == addr {
			from++
		}
	}
	if to != 1 || from != 1 || len(r.Listening) != 1 {
		t.Errorf("in the child's namespace: %d connections to %s, %d from it, listening %q; want 1, 1 and its listener", to, addr, from, r.Listening)
	}
}
