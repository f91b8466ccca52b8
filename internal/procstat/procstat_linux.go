// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rpclab/rpclab/internal/sockdiag"
	"golang.org/x/sys/unix"
)

// CPUTime returns the user plus system CPU time the process pid has used.
// pid 0 means this process (read with getrusage, so it costs no file I/O).
func CPUTime(pid int) (time.Duration, error) {
	if pid == 0 || pid == os.Getpid() {
		return selfCPU()
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("procstat: cpu of pid %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces; fields count from after ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("procstat: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("procstat: malformed /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("procstat: malformed /proc/%d/stat", pid)
	}
	return time.Duration((ut + st) * int64(time.Second) / clockTicks), nil
}

// ConnsTo counts the established TCP connections that process pid (0: this
// process) holds to the address target ("host:port"), as ss or lsof would
// show them. The host may be a name; it is resolved.
//
// This process's own sockets are asked one by one (selfCount); another
// process's are looked up in the kernel's socket tables (sock_diag, or
// /proc/PID/net/tcp where that is refused).
func ConnsTo(pid int, target string) (int, error) {
	if pid == 0 {
		pid = os.Getpid()
	}
	want, err := resolve(target)
	if err != nil {
		return 0, err
	}
	if pid == os.Getpid() {
		if n, err := selfCount(want); err == nil {
			return n, nil
		}
	}
	inodes, err := socketInodes(pid)
	if err != nil {
		return 0, err
	}
	if sameNetns(pid) {
		if n, err := dumpCount(inodes, want); err == nil {
			return n, nil
		}
	} // else, or where sock_diag is refused: the /proc tables (slower)
	return tableCount(pid, inodes, want)
}

// selfCount counts this process's established TCP sockets connected to an
// address of want by asking each of its descriptors (TCP_INFO's state, then
// getpeername): one or two system calls per descriptor. sock_diag's dump
// (diagCount) instead walks every bucket of the kernel's connection hash
// table twice (IPv4, IPv6), however few sockets there are: about 8 ms on
// this machine, taken from the client's CPU inside the measured interval
// when a step counts its connections. A descriptor closed or reused while
// it is looked at counts as what it is when asked, as in a dump.
func selfCount(want map[netip.AddrPort]bool) (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, fmt.Errorf("procstat: list own descriptors: %w", err)
	}
	n := 0
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err == nil && establishedTo(fd, want) {
			n++
		}
	}
	return n, nil
}

// establishedTo reports whether descriptor fd of this process is an
// established TCP socket whose peer is in want.
func establishedTo(fd int, want map[netip.AddrPort]bool) bool {
	// TCP_INFO fails on anything but a TCP socket: ENOTSOCK for a file, a
	// pipe or a closed descriptor, EOPNOTSUPP for a UDP or Unix socket.
	if ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err != nil || ti.State != sockdiag.StateEstablished {
		return false
	}
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return false
	}
	var peer netip.AddrPort
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		peer = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		peer = netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	default:
		return false
	}
	return want[peer]
}

// dumpCount is diagCount; tests check that counting this process's own
// connections never comes to it.
var dumpCount = diagCount

// tableCount counts as diagCount does, from /proc/PID/net/tcp and tcp6.
func tableCount(pid int, inodes map[string]bool, want map[netip.AddrPort]bool) (int, error) {
	n := 0
	for _, f := range []string{"tcp", "tcp6"} {
		c, err := countInTable(fmt.Sprintf("/proc/%d/net/%s", pid, f), inodes, want)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		n += c
	}
	return n, nil
}

func resolve(target string) (map[netip.AddrPort]bool, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("procstat: target %q: %w", target, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("procstat: target %q: bad port", target)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, a)
	} else {
		ips, err := net.LookupIP(host)
		if err != nil {
			return nil, fmt.Errorf("procstat: resolve %q: %w", host, err)
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				addrs = append(addrs, a)
			}
		}
	}
	want := map[netip.AddrPort]bool{}
	for _, a := range addrs {
		a = a.Unmap()
		want[netip.AddrPortFrom(a, uint16(p))] = true
		if a.IsUnspecified() { // ":port" means any local address
			want[netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(p))] = true
			want[netip.AddrPortFrom(netip.IPv6Loopback(), uint16(p))] = true
		}
	}
	return want, nil
}

func socketInodes(pid int) (map[string]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("procstat: list sockets of pid %d: %w", pid, err)
	}
	m := map[string]bool{}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed while we looked
		}
		if strings.HasPrefix(l, "socket:[") {
			m[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	return m, nil
}

// tcpEstablished is the state code of ESTABLISHED in /proc/net/tcp.
const tcpEstablished = "01"

func countInTable(path string, inodes map[string]bool, want map[netip.AddrPort]bool) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	n := 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(fs) < 10 || fs[3] != tcpEstablished || !inodes[fs[9]] {
			continue
		}
		rem, err := parseHexAddr(fs[2])
		if err != nil {
			continue
		}
		if want[rem] {
			n++
		}
	}
	return n, sc.Err()
}

// parseHexAddr parses /proc/net/tcp's "0100007F:C350": the address as 32-bit
// words in host (little-endian) order, then the port in hex.
func parseHexAddr(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("procstat: bad address %q", s)
	}
	raw, err := hex.DecodeString(a)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("procstat: bad address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("procstat: bad port %q", s)
	}
	ip, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}

// Pin restricts every thread of process pid (0: this process) to cpus.
// Threads started later inherit the mask from the thread that starts them.
// It makes two passes so a thread started during the first is caught.
func Pin(pid int, cpus []int) error {
	if pid == 0 {
		pid = os.Getpid()
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	for pass := 0; pass < 2; pass++ {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return fmt.Errorf("procstat: pin pid %d: %w", pid, err)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("procstat: pin thread %d to %v: %w", tid, cpus, err)
			}
		}
	}
	return nil
}

// StartPinned starts cmd with its affinity already restricted to cpus, so
// that a child which sizes itself from its CPU mask at start (the C++
// server's --num-cqs, a runtime's thread pool) sees the CPUs it will run
// on. The fork happens on this goroutine's OS thread, locked to it, with the
// thread's mask narrowed for the fork and restored after it; Go creates new
// threads for other goroutines from a template thread meanwhile, so no other
// thread inherits the narrow mask. If the mask cannot be set (a CPU outside
// this process's own mask), cmd starts unpinned and pinned is false; err is
// cmd.Start's.
func StartPinned(cmd *exec.Cmd, cpus []int) (pinned bool, err error) {
	if len(cpus) == 0 {
		return false, cmd.Start()
	}
	var set, old unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	runtime.LockOSThread()
	if unix.SchedGetaffinity(0, &old) != nil || unix.SchedSetaffinity(0, &set) != nil {
		runtime.UnlockOSThread()
		return false, cmd.Start()
	}
	err = cmd.Start()
	if unix.SchedSetaffinity(0, &old) != nil {
		// Keep the thread locked to this goroutine, so that no other
		// goroutine runs on the narrow mask.
		return true, err
	}
	runtime.UnlockOSThread()
	return true, err
}

// AllowedCPUs lists the CPUs this process may run on.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("procstat: affinity: %w", err)
	}
	var cpus []int
	for c := 0; c < 1024 && len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// ResetPeakRSS sets this process's VmHWM to its current RSS (Linux 4.0+,
// /proc/self/clear_refs). It reports whether the reset worked.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return -1
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return -1
		}
		return kb << 10
	}
	return -1
}

// LockThreadOffCPUsOf locks the calling goroutine to its OS thread and
// moves that thread onto every CPU the process pid may not run on, so that
// the goroutine's work (sampling pid) does not take pid's CPUs. It returns
// the CPUs the thread may now run on, and restore, which puts the thread's
// mask back and unlocks it; call restore before the goroutine returns.
//
// restore matters beyond the mask: a goroutine that returns while locked
// makes the runtime end its thread, and Linux sends PR_SET_PDEATHSIG to
// every child that thread started (DieWithParent), so a child server that
// happened to be started from it would be stopped (seen as a server
// exiting with status 0 in the middle of a sweep). If the mask cannot be
// put back, restore leaves the thread locked, and it is ended with its
// goroutine rather than handed on with the narrow mask.
func LockThreadOffCPUsOf(pid int) (cpus []int, restore func(), err error) {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, func() {}, fmt.Errorf("procstat: affinity: %w", err)
	}
	restore = func() {
		if unix.SchedSetaffinity(0, &old) == nil {
			runtime.UnlockOSThread()
		}
	}
	var theirs unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &theirs); err != nil {
		return nil, restore, fmt.Errorf("procstat: affinity of pid %d: %w", pid, err)
	}
	// Every CPU but theirs; the kernel keeps only those online and in this
	// process's cpuset, and refuses an empty result.
	var set unix.CPUSet
	for c := range cpuSetSize {
		if !theirs.IsSet(c) {
			set.Set(c)
		}
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, restore, fmt.Errorf("procstat: no CPU outside the %d of pid %d: %w", theirs.Count(), pid, err)
	}
	var now unix.CPUSet // the kernel writes only the CPUs it has
	if err := unix.SchedGetaffinity(0, &now); err != nil {
		return nil, restore, fmt.Errorf("procstat: affinity: %w", err)
	}
	for c := range cpuSetSize {
		if now.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, restore, nil
}

// cpuSetSize is the number of CPUs a unix.CPUSet holds (CPU_SETSIZE).
const cpuSetSize = 1024

// DieWithParent makes a child started with attr receive SIGTERM when this
// process dies (Linux's PR_SET_PDEATHSIG), so that a killed driver leaves
// no server or client behind. attr nil means a new one.
func DieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Pdeathsig = syscall.SIGTERM
	return attr
}

// ReadCPUStat reads every CPU's times since boot from /proc/stat.
func ReadCPUStat() (CPUStat, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUStat{}, fmt.Errorf("procstat: %w", err)
	}
	return ParseCPUStat(string(b))
}
