// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"

	"github.com/rpclab/rpclab/internal/sockdiag"
)

// Established TCP sockets come from the kernel's sock_diag netlink interface
// (what ss uses, through internal/sockdiag), filtered to ESTABLISHED in the
// kernel. Reading /proc/PID/net/tcp instead costs about 5 ms of kernel time
// per file on this machine, however few sockets there are (the kernel walks
// every bucket of its connection hash table, sized by memory), so a driver
// sampling a client's connections every 50 ms spent a fifth of the client's
// CPU on it.

// sameNetns reports whether process pid shares this process's network
// namespace, where sock_diag answers.
func sameNetns(pid int) bool {
	mine, err1 := os.Readlink("/proc/self/ns/net")
	theirs, err2 := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
	return err1 == nil && err2 == nil && mine == theirs
}

// diagCount counts the ESTABLISHED TCP sockets whose inode is in inodes and
// whose remote address is in want, over IPv4 and IPv6.
func diagCount(inodes map[string]bool, want map[netip.AddrPort]bool) (int, error) {
	s, err := sockdiag.Open("")
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	defer s.Close()
	n := 0
	err = s.DumpTCP(sockdiag.Established, false, func(m *sockdiag.Msg) {
		if want[m.Remote] && inodes[strconv.FormatUint(uint64(m.Inode), 10)] {
			n++
		}
	})
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	return n, nil
}
