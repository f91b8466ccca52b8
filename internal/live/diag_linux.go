// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// TCP states of sock_diag (linux/tcp_states.h).
const (
	tcpEstablished = 1
	tcpListen      = 10
)

// diag asks the kernel's sock_diag for TCP sockets with TCP_INFO in one
// network namespace: this process's, or the target's when it differs
// (a container), through a netlink socket opened there (setns on a
// locked OS thread, which needs root).
type diag struct {
	h *netlink.Handle
}

// openDiag opens the sock_diag handle for pid's network namespace.
func openDiag(pid int) (*diag, error) {
	mine, err1 := os.Readlink("/proc/self/ns/net")
	theirs, err2 := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err2 != nil {
		return nil, procErr(pid, "network namespace (/proc/PID/ns/net)", err2)
	}
	if err1 == nil && mine == theirs {
		h, err := netlink.NewHandle(unix.NETLINK_INET_DIAG)
		if err != nil {
			return nil, fmt.Errorf("live: sock_diag: %w", err)
		}
		return &diag{h}, nil
	}
	ns, err := netns.GetFromPath("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, procErr(pid, "network namespace (/proc/PID/ns/net)", err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_INET_DIAG)
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("%w: pid %d is in another network namespace (%s): reading its sockets needs root (CAP_SYS_ADMIN to enter it)", ErrPermission, pid, theirs)
		}
		return nil, fmt.Errorf("live: sock_diag in pid %d's network namespace: %w", pid, err)
	}
	return &diag{h}, nil
}

func (d *diag) close() { d.h.Close() }

// sock is one TCP socket of the process: its addresses and TCP_INFO.
type sock struct {
	inode         uint32
	local, remote string
	info          netlink.TCPInfo
}

// dump returns the namespace's established and listening TCP sockets.
func (d *diag) dump() ([]*netlink.InetDiagTCPInfoResp, error) {
	var out []*netlink.InetDiagTCPInfoResp
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		resp, err := d.h.SocketDiagTCPInfo(fam)
		if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
			return nil, fmt.Errorf("live: sock_diag: %w", err)
		}
		for _, r := range resp {
			if m := r.InetDiagMsg; m != nil && (m.State == tcpEstablished || m.State == tcpListen) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// mine returns the sockets of dump whose inode is in inodes: the
// established ones with TCP_INFO, and the listening addresses.
func mine(dump []*netlink.InetDiagTCPInfoResp, inodes map[uint32]bool) (estab []sock, listening []string) {
	for _, r := range dump {
		m := r.InetDiagMsg
		if !inodes[m.INode] {
			continue
		}
		local := addrPort(m.ID.Source, m.ID.SourcePort)
		if m.State == tcpListen {
			listening = append(listening, local)
			continue
		}
		k := sock{inode: m.INode, local: local, remote: addrPort(m.ID.Destination, m.ID.DestinationPort)}
		if r.TCPInfo != nil {
			k.info = *r.TCPInfo
		}
		estab = append(estab, k)
	}
	return estab, listening
}

// addrPort formats an address as host:port, an IPv4-mapped IPv6 address
// as IPv4.
func addrPort(ip net.IP, port uint16) string {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return net.JoinHostPort(ip.String(), strconv.Itoa(int(port)))
	}
	return netip.AddrPortFrom(a.Unmap(), port).String()
}
