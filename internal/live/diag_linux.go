// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/rpclab/rpclab/internal/sockdiag"
)

// diag reads the process's TCP sockets with TCP_INFO from the kernel's
// sock_diag, in the process's network namespace (entered on a locked
// thread, which needs root, when it differs from this process's), and
// knows which of the namespace's sockets are the process's.
//
// Reading /proc/PID/fd's links costs a readlink per descriptor (about 8
// µs each here: 80 ms for 10,000 connections), so the links are read again
// only when the descriptors changed (listFDs), a socket known to be the
// process's left the dump (its descriptor may now hold another), or every
// fullScan samples.
type diag struct {
	s     *sockdiag.Socket
	pid   int
	other bool // the process is in another network namespace
	fdDir string
	ours  map[uint32]bool // the process's sockets the last dump held
	list  fdList          // the descriptors when ours was read
	since int             // samples since ours was read
	socks []sock          // reused by each sample
	lis   []uint32        // the listening sockets' inodes, of the last dump
	dents []byte          // getdents buffer, made on first use (kernels before 6.2)
}

// fullScan is how many samples may pass between full scans of
// /proc/PID/fd when the process's descriptors look unchanged.
const fullScan = 60

// openDiag opens the sock_diag socket for pid's network namespace.
func openDiag(pid int) (*diag, error) {
	nsPath := "/proc/" + strconv.Itoa(pid) + "/ns/net"
	mine, err1 := os.Readlink("/proc/self/ns/net")
	theirs, err2 := os.Readlink(nsPath)
	if err2 != nil {
		return nil, procErr(pid, "network namespace (/proc/PID/ns/net)", err2)
	}
	if err1 == nil && mine == theirs {
		nsPath = ""
	}
	s, err := sockdiag.Open(nsPath)
	if err != nil {
		if nsPath != "" && errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("%w: pid %d is in another network namespace (%s): reading its sockets needs root (CAP_SYS_ADMIN to enter it)", ErrPermission, pid, theirs)
		}
		return nil, fmt.Errorf("live: pid %d: %w", pid, err)
	}
	return &diag{s: s, pid: pid, other: nsPath != "", fdDir: "/proc/" + strconv.Itoa(pid) + "/fd"}, nil
}

func (d *diag) close() { d.s.Close() }

// sameNetns reports whether the process shares this process's network
// namespace, where its loopback addresses are ours.
func (d *diag) sameNetns() bool { return !d.other }

// sock is one established TCP socket of the process.
type sock struct {
	inode         uint32
	local, remote netip.AddrPort
	info          sockdiag.TCPInfo
}

// sockets returns the process's established sockets with TCP_INFO (valid
// until the next call) and its listening addresses.
func (d *diag) sockets() ([]sock, []string, error) {
	list, err := d.listFDs()
	if err != nil {
		return nil, nil, err
	}
	fresh := d.ours == nil || d.since >= fullScan || list != d.list
	if fresh {
		if err := d.rescan(list); err != nil {
			return nil, nil, err
		}
	}
	socks, listening, seen, err := d.dump()
	if err != nil {
		return nil, nil, err
	}
	if !fresh && seen < len(d.ours) {
		// A socket of the process left: its descriptor may hold another.
		if err := d.rescan(list); err != nil {
			return nil, nil, err
		}
		if socks, listening, seen, err = d.dump(); err != nil {
			return nil, nil, err
		}
	}
	if seen < len(d.ours) {
		d.keepSeen(socks)
	}
	d.since++
	return socks, listening, nil
}

// dump reads the namespace's established and listening TCP sockets and
// keeps the process's; seen counts them.
func (d *diag) dump() (socks []sock, listening []string, seen int, err error) {
	socks, d.lis = d.socks[:0], d.lis[:0]
	err = d.s.DumpTCP(sockdiag.Established|sockdiag.Listen, true, func(m *sockdiag.Msg) {
		if !d.ours[m.Inode] {
			return
		}
		seen++
		if m.State == sockdiag.StateListen {
			listening = append(listening, m.Local.String())
			d.lis = append(d.lis, m.Inode)
			return
		}
		k := sock{inode: m.Inode, local: m.Local, remote: m.Remote}
		k.info, _ = m.TCPInfo()
		socks = append(socks, k)
	})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("live: %w", err)
	}
	d.socks = socks
	return socks, listening, seen, nil
}

// rescan reads the process's socket inodes from its descriptors' links.
func (d *diag) rescan(list fdList) error {
	ours, err := socketInodes(d.pid)
	if err != nil {
		return err
	}
	d.ours, d.list, d.since = ours, list, 0
	return nil
}

// keepSeen narrows ours to the sockets the last dump held (established or
// listening), so that a later sample can tell when one leaves.
func (d *diag) keepSeen(socks []sock) {
	kept := make(map[uint32]bool, len(socks)+len(d.lis))
	for _, k := range socks {
		kept[k.inode] = true
	}
	for _, ino := range d.lis {
		kept[ino] = true
	}
	d.ours = kept
}
