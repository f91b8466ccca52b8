// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
)

// LocalServer is the process on this host that holds a target's
// listening socket: the server a study of a local target measures, whose
// CPU the study reads from the operating system when the server does not
// report it (result.ServerCPU with Source "os"), so that what is left of
// the host's busy time is other work.
type LocalServer struct {
	PID  int
	CPUs int
}

// ErrServerUnreadable: the target listens on this host, but the process
// holding its socket cannot be read (another user's, another network
// namespace's): its CPU is unknown, never idle.
var ErrServerUnreadable = errors.New("the server's process cannot be read")

// FindLocalServer finds the process listening on target's port on this
// host (/proc/net/tcp and tcp6 give the socket's inode, /proc/*/fd the
// process holding it). It returns nil and no error for a target on
// another host, or one this process serves itself (its CPU is the
// client's figure already), and an error wrapping ErrServerUnreadable for
// a local target whose process cannot be found or read.
func FindLocalServer(target string) (*LocalServer, error) {
	host, portText, err := net.SplitHostPort(loadgen.HostPort(target))
	if err != nil || runtime.GOOS != "linux" || !onThisHost(host) {
		return nil, nil
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, nil
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeningInodes(f, uint16(port), inodes)
	}
	if len(inodes) == 0 {
		return nil, fmt.Errorf("%w: no socket of this network namespace listens on port %d", ErrServerUnreadable, port)
	}
	pid, denied := socketOwner(inodes)
	switch {
	case pid == os.Getpid():
		return nil, nil
	case pid == 0 && denied:
		return nil, fmt.Errorf("%w: the process listening on port %d is not readable here (another user's?)", ErrServerUnreadable, port)
	case pid == 0:
		return nil, fmt.Errorf("%w: no process of this host holds the socket listening on port %d", ErrServerUnreadable, port)
	}
	cpus := allowedCPUs(pid)
	if _, err := procstat.CPUTime(pid); err != nil {
		return nil, fmt.Errorf("%w: process %d, listening on port %d: %v", ErrServerUnreadable, pid, port, err)
	}
	return &LocalServer{PID: pid, CPUs: cpus}, nil
}

// allowedCPUs counts the CPUs process pid may run on (its status's
// Cpus_allowed_list, "0-3,6"); 1 when it cannot be read.
func allowedCPUs(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 1
	}
	for _, line := range strings.Split(string(b), "\n") {
		list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		n := 0
		for _, part := range strings.Split(strings.TrimSpace(list), ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 == nil && err2 == nil && b >= a {
				n += b - a + 1
			}
		}
		return max(n, 1)
	}
	return 1
}

// onThisHost says whether host names this host: localhost, a loopback or
// unspecified address, or an address of one of its interfaces.
func onThisHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	for _, ia := range addrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && p.Addr().Unmap() == a.Unmap() {
			return true
		}
	}
	return false
}

// listeningInodes adds to inodes the socket inodes of file's (a
// /proc/net/tcp table) listening sockets on port.
func listeningInodes(file string, port uint16, inodes map[string]bool) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		i := strings.LastIndexByte(fields[1], ':')
		if p, err := strconv.ParseUint(fields[1][i+1:], 16, 16); err == nil && uint16(p) == port && fields[9] != "0" {
			inodes[fields[9]] = true
		}
	}
}

// socketOwner finds the process with a descriptor on one of inodes;
// denied says some process's descriptors could not be read.
func socketOwner(inodes map[string]bool) (pid int, denied bool) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		fds, err := os.ReadDir(filepath.Join(p, "fd"))
		if err != nil {
			denied = denied || errors.Is(err, os.ErrPermission)
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(p, "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				n, _ := strconv.Atoi(filepath.Base(p))
				return n, false
			}
		}
	}
	return 0, denied
}

// cpuMark is a reading of the server process's CPU time, and when.
type cpuMark struct {
	cpu  time.Duration
	wall time.Time
}

// mark reads the server's CPU time now (ok false when it cannot).
func (l *LocalServer) mark() (cpuMark, bool) {
	t, err := procstat.CPUTime(l.PID)
	return cpuMark{t, time.Now()}, err == nil
}

// fill sets rec's server_cpu from two readings around its step, when the
// server did not report its own: the share of the server's CPUs it kept
// busy over the whole step (warm-up and set-up included), scaled to the
// record's interval, marked as read from the operating system.
func (l *LocalServer) fill(rec *result.Record, from, to cpuMark) {
	wall := to.wall.Sub(from.wall)
	if rec.ServerCPU != nil || wall <= 0 || rec.DurationNS <= 0 || to.cpu < from.cpu {
		return
	}
	busy := float64(to.cpu-from.cpu) / float64(wall) / float64(l.CPUs)
	sc := &result.ServerCPU{CPUs: l.CPUs, Busy: busy, Source: "os",
		CPUNS: int64(busy * float64(l.CPUs) * float64(rec.DurationNS))}
	if rec.Requests > 0 {
		sc.CPUNSPerRPC = float64(sc.CPUNS) / float64(rec.Requests)
	}
	rec.ServerCPU = sc
}
