// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sockdiag

import (
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// pair is one loopback TCP connection that has carried 100 KB each way,
// and its listener.
type pair struct {
	lis          net.Listener
	client, peer *net.TCPConn
}

func newPair(t *testing.T, network, addr string) *pair {
	t.Helper()
	lis, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("listen %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { lis.Close() })
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := lis.Accept()
		if err == nil {
			acc <- c
		}
		close(acc)
	}()
	c, err := net.Dial(network, lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := <-acc
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	p := &pair{lis: lis, client: c.(*net.TCPConn), peer: s.(*net.TCPConn)}
	const n = 100_000
	for _, dir := range [][2]net.Conn{{c, s}, {s, c}} {
		go func() { _, _ = dir[0].Write(make([]byte, n)) }()
		if _, err := io.ReadFull(dir[1], make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// kernel is what the kernel says of c through getsockopt: its inode and
// TCP_INFO.
func kernel(t *testing.T, c syscall.Conn) (uint32, *unix.TCPInfo) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ino uint32
	var info *unix.TCPInfo
	var serr error
	if err := rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if serr = unix.Fstat(int(fd), &st); serr == nil {
			ino = uint32(st.Ino)
			info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		}
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return ino, info
}

func dumpAll(t *testing.T, s *Socket, states uint32, info bool) map[uint32]Msg {
	t.Helper()
	out := map[uint32]Msg{}
	if err := s.DumpTCP(states, info, func(m *Msg) { out[m.Inode] = *m }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDumpMatchesGetsockopt: the dump finds both ends of a quiet loopback
// connection with the addresses Go reports and the TCP_INFO getsockopt
// reports, over IPv4 and IPv6; the listener only when listening sockets
// are asked for.
func TestDumpMatchesGetsockopt(t *testing.T) {
	for _, tc := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		t.Run(tc.network, func(t *testing.T) {
			p := newPair(t, tc.network, tc.addr)
			s, err := Open("")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := dumpAll(t, s, Established, true)
			for _, c := range []*net.TCPConn{p.client, p.peer} {
				ino, want := kernel(t, c)
				m, ok := got[ino]
				if !ok {
					t.Fatalf("inode %d (%v) not in the dump of %d sockets", ino, c.LocalAddr(), len(got))
				}
				if m.State != StateEstablished || m.Local != addrPort(c.LocalAddr()) || m.Remote != addrPort(c.RemoteAddr()) {
					t.Errorf("inode %d: state %d %v -> %v, want %d %v -> %v", ino, m.State, m.Local, m.Remote,
						StateEstablished, c.LocalAddr(), c.RemoteAddr())
				}
				info, ok := m.TCPInfo()
				if !ok {
					t.Fatalf("inode %d: no TCP_INFO", ino)
				}
				if info.BytesAcked != want.Bytes_acked || info.BytesReceived != want.Bytes_received ||
					info.BytesSent != want.Bytes_sent || info.Unacked != want.Unacked ||
					info.SndCwnd != want.Snd_cwnd || info.MinRTT != want.Min_rtt || info.BusyUS != want.Busy_time {
					t.Errorf("inode %d: dump %+v, getsockopt %+v", ino, info, *want)
				}
				if info.BytesAcked < 100_000 || info.BytesReceived < 100_000 {
					t.Errorf("inode %d: acked %d, received %d; want at least the 100 KB each way", ino, info.BytesAcked, info.BytesReceived)
				}
			}
			lino, _ := kernel(t, p.lis.(*net.TCPListener))
			if _, ok := got[lino]; ok {
				t.Error("the listener is in a dump of established sockets")
			}
			if m, ok := dumpAll(t, s, Established|Listen, false)[lino]; !ok || m.State != StateListen {
				t.Errorf("listener in a dump with listening sockets: %v, state %d", ok, m.State)
			} else if _, ok := m.TCPInfo(); ok {
				t.Error("TCP_INFO in a dump that did not ask for it")
			}
		})
	}
}

func addrPort(a net.Addr) netip.AddrPort {
	ap := a.(*net.TCPAddr).AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// TestDumpAllocatesNothingPerSocket: a dump that holds 200 more sockets
// allocates no more than one that holds 2 (its Msg and buffer are reused).
func TestDumpAllocatesNothingPerSocket(t *testing.T) {
	s, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lis, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	port := uint16(lis.Addr().(*net.TCPAddr).Port)
	// mine counts the dump's sockets of connections to lis, both ends.
	mine := func() (n int) {
		if err := s.DumpTCP(Established, true, func(m *Msg) {
			if m.Local.Port() == port || m.Remote.Port() == port {
				n++
			}
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	connect := func(k int) {
		for range k {
			c, err := net.Dial("tcp4", lis.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			p, err := lis.Accept()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close(); p.Close() })
		}
	}
	connect(1)
	few := testing.AllocsPerRun(20, func() { mine() })
	connect(100)
	if n := mine(); n != 202 {
		t.Fatalf("dumped %d sockets of connections to the listener, want 202", n)
	}
	if many := testing.AllocsPerRun(20, func() { mine() }); many > few {
		t.Errorf("allocations per dump: %v with 200 more sockets, %v before", many, few)
	}
}

// TestOpenInANamespace: a socket opened through a namespace's file sees
// that namespace (here this process's own, entered by path); a path that
// is not a namespace is a clear error.
func TestOpenInANamespace(t *testing.T) {
	if unix.Geteuid() != 0 {
		t.Skip("entering a network namespace needs root")
	}
	p := newPair(t, "tcp4", "127.0.0.1:0")
	s, err := Open("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ino, _ := kernel(t, p.client)
	if _, ok := dumpAll(t, s, Established, false)[ino]; !ok {
		t.Error("the connection is not in the dump of a socket opened by the namespace's path")
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("Open of a directory: no error")
	}
}
