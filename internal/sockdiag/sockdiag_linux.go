// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sockdiag

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"runtime"
	"syscall"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Sizes from linux/inet_diag.h and linux/netlink.h.
const (
	reqLen      = 60 // struct inet_diag_req, the request of TCPDIAG_GETSOCK
	msgLen      = 72 // struct inet_diag_msg
	hdrLen      = unix.SizeofNlMsghdr
	attrHdrLen  = 4
	diagInfoExt = 2 // INET_DIAG_INFO, the attribute carrying struct tcp_info
	// tcpdiagGetsock is TCPDIAG_GETSOCK, inet_diag's first request type:
	// its dump covers IPv4 and IPv6 in one walk of the kernel's socket
	// tables (the family is AF_UNSPEC), where SOCK_DIAG_BY_FAMILY's needs
	// one walk per family (the second, matching nothing, cost 5 ms with
	// 10,000 sockets here).
	tcpdiagGetsock = 18
	// bufLen holds the largest batch the kernel sends a dump reader (it
	// fills one skb of at most 32 KiB per recv).
	bufLen = 64 << 10
)

// Socket is a NETLINK_SOCK_DIAG socket. It is not safe for concurrent use.
type Socket struct {
	fd  int
	seq uint32
	buf []byte
	req [hdrLen + reqLen]byte
	msg Msg
}

// Open opens a sock_diag socket in this process's network namespace, or,
// when netnsPath is not empty, in the namespace of that file (such as
// /proc/PID/ns/net): entered on a locked thread for the socket call only,
// which needs CAP_SYS_ADMIN (EPERM otherwise).
func Open(netnsPath string) (*Socket, error) {
	var fd int
	var err error
	if netnsPath == "" {
		fd, err = socket()
	} else {
		fd, err = socketIn(netnsPath)
	}
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sock_diag: bind: %w", err)
	}
	return &Socket{fd: fd, buf: make([]byte, bufLen)}, nil
}

func socket() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return -1, fmt.Errorf("sock_diag: %w", err)
	}
	return fd, nil
}

// socketIn makes the socket inside the namespace at path (a socket keeps
// the namespace it was made in), on a thread of its own: a goroutine locked
// to it enters the namespace, and if it cannot go back it exits still
// locked, which ends the thread rather than let it serve other goroutines
// in the wrong namespace.
func socketIn(path string) (int, error) {
	type made struct {
		fd  int
		err error
	}
	ch := make(chan made, 1)
	go func() {
		runtime.LockOSThread()
		fd, back, err := enterAndDial(path)
		if back {
			runtime.UnlockOSThread()
		}
		ch <- made{fd, err}
	}()
	m := <-ch
	return m.fd, m.err
}

// enterAndDial enters the namespace at path on the (locked) thread, makes
// the socket and goes back; back is false if it could not go back.
func enterAndDial(path string) (fd int, back bool, err error) {
	target, err := netns.GetFromPath(path)
	if err != nil {
		return -1, true, fmt.Errorf("sock_diag: network namespace %s: %w", path, err)
	}
	defer target.Close()
	mine, err := netns.Get()
	if err != nil {
		return -1, true, fmt.Errorf("sock_diag: this thread's network namespace: %w", err)
	}
	defer mine.Close()
	if err := netns.Set(target); err != nil {
		return -1, true, fmt.Errorf("sock_diag: enter network namespace %s: %w", path, err)
	}
	fd, err = socket()
	if err2 := netns.Set(mine); err2 != nil {
		if err == nil {
			unix.Close(fd)
		}
		return -1, false, fmt.Errorf("sock_diag: leave network namespace %s: %w", path, err2)
	}
	return fd, true, err
}

// Close closes the socket.
func (s *Socket) Close() error { return unix.Close(s.fd) }

// DumpTCP calls fn for every TCP socket, IPv4 and IPv6, in a state of
// states (Established|Listen, ...), with TCP_INFO when info is set. fn
// must not keep the Msg. A dump the kernel marks interrupted (a socket
// table changed during it) is returned as it is, as ss does.
func (s *Socket) DumpTCP(states uint32, info bool, fn func(*Msg)) error {
	s.seq++
	ne := binary.NativeEndian
	r := s.req[:]
	clear(r)
	ne.PutUint32(r[0:], uint32(len(r)))
	ne.PutUint16(r[4:], tcpdiagGetsock)
	ne.PutUint16(r[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(r[8:], s.seq)
	q := r[hdrLen:] // idiag_family 0 (both), src_len, dst_len, ext, id, states, dbs
	if info {
		q[3] = 1 << (diagInfoExt - 1)
	}
	ne.PutUint32(q[52:], states)
	// write and read, not sendto and recvfrom: a netlink socket's peer is
	// the kernel by default, and they allocate no address per call.
	if _, err := unix.Write(s.fd, r); err != nil {
		return fmt.Errorf("sock_diag: %w", err)
	}
	for {
		n, err := unix.Read(s.fd, s.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("sock_diag: %w", err)
		}
		done, err := s.batch(s.buf[:n], fn)
		if done || err != nil {
			return err
		}
	}
}

// batch walks one recv's messages; done at NLMSG_DONE.
func (s *Socket) batch(b []byte, fn func(*Msg)) (done bool, err error) {
	ne := binary.NativeEndian
	for len(b) >= hdrLen {
		l := int(ne.Uint32(b[0:]))
		if l < hdrLen || l > len(b) {
			return false, fmt.Errorf("sock_diag: malformed message of %d bytes in %d", l, len(b))
		}
		typ, seq := ne.Uint16(b[4:]), ne.Uint32(b[8:])
		body := b[hdrLen:l]
		b = b[min(nlmAlign(l), len(b)):]
		if seq != s.seq {
			continue // a late reply to an earlier dump
		}
		switch typ {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if len(body) >= 4 {
				if e := int32(ne.Uint32(body)); e < 0 {
					return true, fmt.Errorf("sock_diag: %w", syscall.Errno(-e))
				}
			}
			return true, nil
		case tcpdiagGetsock, unix.SOCK_DIAG_BY_FAMILY:
			if len(body) >= msgLen {
				s.parse(body)
				fn(&s.msg)
			}
		}
	}
	return false, nil
}

// parse fills s.msg from one inet_diag_msg and its attributes.
func (s *Socket) parse(d []byte) {
	m := &s.msg
	m.Family, m.State = d[0], d[1]
	sport, dport := binary.BigEndian.Uint16(d[4:]), binary.BigEndian.Uint16(d[6:])
	if m.Family == unix.AF_INET {
		m.Local = netip.AddrPortFrom(netip.AddrFrom4([4]byte(d[8:12])), sport)
		m.Remote = netip.AddrPortFrom(netip.AddrFrom4([4]byte(d[24:28])), dport)
	} else {
		m.Local = netip.AddrPortFrom(netip.AddrFrom16([16]byte(d[8:24])).Unmap(), sport)
		m.Remote = netip.AddrPortFrom(netip.AddrFrom16([16]byte(d[24:40])).Unmap(), dport)
	}
	m.Inode = binary.NativeEndian.Uint32(d[68:])
	m.info = nil
	for a := d[msgLen:]; len(a) >= attrHdrLen; {
		l := int(binary.NativeEndian.Uint16(a[0:]))
		if l < attrHdrLen || l > len(a) {
			return
		}
		if binary.NativeEndian.Uint16(a[2:]) == diagInfoExt {
			m.info = a[attrHdrLen:l]
		}
		a = a[min(nlmAlign(l), len(a)):]
	}
}

func nlmAlign(n int) int { return (n + 3) &^ 3 }
