// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"slices"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/rpclab/rpclab/internal/procstat"
)

// read takes one snapshot: the process's CPU and threads, the host's CPU,
// and the process's sockets with TCP_INFO.
func (s *Sampler) read() (*snapshot, error) {
	at := time.Now()
	name, cpu, threads, err := readProcess(s.pid)
	if err != nil {
		return nil, err
	}
	dump, err := s.d.dump()
	if err != nil {
		return nil, err
	}
	inodes, err := s.fds.inodes(s.pid, dump)
	if err != nil {
		return nil, err
	}
	socks, listening := mine(dump, inodes)
	snap := &snapshot{at: at, name: name, cpu: cpu, threads: threads, socks: socks, listening: listening}
	if st, err := procstat.ReadCPUStat(); err == nil {
		t := st.Sum(nil)
		snap.hostBusy, snap.hostCPUs = t.Busy+t.Steal, len(st.PerCPU)
	}
	return snap, nil
}

// fullScan is how many samples may pass between full scans of
// /proc/PID/fd when the process's descriptors look unchanged.
const fullScan = 60

// fdCache knows which sockets of the namespace are the process's. Reading
// /proc/PID/fd's links costs a readlink per descriptor (5 to 25 µs each
// here: 50 to 250 ms for 10,000 connections), so the links are read again
// only when the descriptors' numbers changed, a socket known to be the
// process's left the dump (its descriptor may now hold another), or every
// fullScan samples. Listing the numbers costs one getdents.
type fdCache struct {
	ours  map[uint32]bool
	names []string
	since int
}

func (c *fdCache) inodes(pid int, dump []*netlink.InetDiagTCPInfoResp) (map[uint32]bool, error) {
	names, err := fdNames(pid)
	if err != nil {
		return nil, err
	}
	fresh := c.ours == nil || c.since >= fullScan || !slices.Equal(names, c.names)
	if !fresh {
		seen := 0
		for _, r := range dump {
			if c.ours[r.InetDiagMsg.INode] {
				seen++
			}
		}
		fresh = seen < c.alive()
	}
	if !fresh {
		c.since++
		return c.ours, nil
	}
	ours, err := socketInodes(pid)
	if err != nil {
		return nil, err
	}
	// Keep only the process's sockets the dump holds (established or
	// listening), so a later sample can tell when one leaves.
	kept := make(map[uint32]bool, len(ours))
	for _, r := range dump {
		if ino := r.InetDiagMsg.INode; ours[ino] {
			kept[ino] = true
		}
	}
	c.ours, c.names, c.since = kept, names, 0
	return kept, nil
}

func (c *fdCache) alive() int { return len(c.ours) }
