// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// maxFDs bounds the file descriptors one sample reads.
const maxFDs = 1 << 20

// procErr maps a /proc read's failure to this package's errors.
func procErr(pid int, what string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH):
		return fmt.Errorf("%w: pid %d (%s)", ErrEnded, pid, what)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: pid %d's %s: run as the process's user, or as root (CAP_SYS_PTRACE to read another user's /proc/PID/fd, CAP_NET_ADMIN and CAP_SYS_ADMIN for another network namespace)", ErrPermission, pid, what)
	}
	return fmt.Errorf("live: pid %d's %s: %w", pid, what, err)
}

// socketInodes returns the inodes of pid's sockets (/proc/PID/fd links
// "socket:[N]"), reading the links without opening the sockets.
func socketInodes(pid int) (map[uint32]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	f, err := os.Open(dir)
	if err != nil {
		return nil, procErr(pid, "file descriptors (/proc/PID/fd)", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(maxFDs)
	if err != nil && len(names) == 0 {
		return nil, procErr(pid, "file descriptors (/proc/PID/fd)", err)
	}
	out := make(map[uint32]bool)
	buf := make([]byte, 64)
	dfd := int(f.Fd())
	for _, n := range names {
		// Relative to the directory: no walk of /proc/PID/fd per link.
		k, err := unix.Readlinkat(dfd, n, buf)
		if err != nil {
			continue // closed since the listing
		}
		l := buf[:k]
		if !bytes.HasPrefix(l, []byte("socket:[")) || l[len(l)-1] != ']' {
			continue
		}
		ino, err := strconv.ParseUint(string(l[8:len(l)-1]), 10, 32)
		if err == nil {
			out[uint32(ino)] = true
		}
	}
	return out, nil
}

// fdList identifies the list of a process's descriptors: their count and,
// where the kernel does not report the count, a hash of their numbers.
type fdList struct {
	n int
	h uint64
}

// listFDs identifies the process's descriptors. Linux 6.2 and later report
// their count as the size of /proc/PID/fd, in one stat; older kernels
// report 0, and the numbers are listed with getdents into a reused buffer
// (about 0.7 µs per descriptor) and hashed. A count misses a socket opened
// between two samples in which another descriptor closed; the full scan
// every fullScan samples finds it.
func (d *diag) listFDs() (fdList, error) {
	var st unix.Stat_t
	if err := unix.Stat(d.fdDir, &st); err != nil {
		return fdList{}, procErr(d.pid, "file descriptors (/proc/PID/fd)", err)
	}
	if st.Size > 0 {
		return fdList{n: int(st.Size)}, nil
	}
	return d.scanFDs()
}

// scanFDs lists /proc/PID/fd with getdents: the descriptors' count and a
// hash of their numbers.
func (d *diag) scanFDs() (fdList, error) {
	fd, err := unix.Open(d.fdDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fdList{}, procErr(d.pid, "file descriptors (/proc/PID/fd)", err)
	}
	defer unix.Close(fd)
	if d.dents == nil {
		d.dents = make([]byte, 32<<10)
	}
	l := fdList{h: 14695981039346656037} // FNV-1a, 64 bits
	for l.n < maxFDs {
		n, err := unix.Getdents(fd, d.dents)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fdList{}, procErr(d.pid, "file descriptors (/proc/PID/fd)", err)
		}
		if n <= 0 {
			break
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8,
		// then the name, NUL-terminated.
		for b := d.dents[:n]; len(b) >= 20; {
			rec := int(binary.NativeEndian.Uint16(b[16:]))
			if rec < 20 || rec > len(b) {
				break
			}
			if b[19] == '.' { // "." and ".."; descriptors are numbers
				b = b[rec:]
				continue
			}
			for _, c := range b[19:rec] {
				if c == 0 {
					break
				}
				l.h = (l.h ^ uint64(c)) * 1099511628211
			}
			l.h = (l.h ^ '/') * 1099511628211
			l.n++
			b = b[rec:]
		}
	}
	return l, nil
}

// statCPU parses a /proc/.../stat line: its command name and utime+stime.
func statCPU(b []byte) (name string, cpu time.Duration, ok bool) {
	s := string(b)
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", 0, false
	}
	f := strings.Fields(s[j+1:])
	if len(f) < 13 {
		return "", 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return s[i+1 : j], time.Duration((ut + st) * int64(time.Second) / clockTicks), true
}

// readProcess reads pid's own CPU and each of its threads'.
func readProcess(pid int) (name string, cpu time.Duration, threads []thread, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, nil, procErr(pid, "CPU (/proc/PID/stat)", err)
	}
	name, cpu, ok := statCPU(b)
	if !ok {
		return "", 0, nil, fmt.Errorf("live: malformed /proc/%d/stat", pid)
	}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	f, err := os.Open(dir)
	if err != nil {
		return "", 0, nil, procErr(pid, "threads (/proc/PID/task)", err)
	}
	tids, _ := f.Readdirnames(maxThreads)
	f.Close()
	threads = make([]thread, 0, len(tids))
	for _, t := range tids {
		tid, err := strconv.Atoi(t)
		if err != nil {
			continue
		}
		b, err := os.ReadFile(dir + "/" + t + "/stat")
		if err != nil {
			continue // the thread ended
		}
		if n, c, ok := statCPU(b); ok {
			threads = append(threads, thread{tid: tid, name: n, cpu: c, wait: schedWait(dir + "/" + t + "/schedstat")})
		}
	}
	return name, cpu, threads, nil
}

// allowedCPUs returns pid's affinity's CPU count and its cgroup's CPU
// quota in CPUs (0: none).
func allowedCPUs(pid int) (affinity int, quota float64) {
	var set unix.CPUSet
	if unix.SchedGetaffinity(pid, &set) == nil {
		affinity = set.Count()
	}
	return affinity, cgroupQuota(pid)
}

// cgroupQuota reads pid's cgroup v2 cpu.max (or v1's cfs quota) along its
// path up to the root, the lowest quota found.
func cgroupQuota(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return 0
	}
	best := 0.0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		v1 := strings.Contains(parts[1], "cpu") && parts[1] != ""
		if parts[1] != "" && !v1 {
			continue
		}
		for p := parts[2]; ; p = filepath.Dir(p) {
			q := quotaAt(p, v1)
			if q > 0 && (best == 0 || q < best) {
				best = q
			}
			if p == "/" || p == "." {
				break
			}
		}
	}
	return best
}

// quotaAt reads one cgroup's quota in CPUs (0: none or unreadable).
func quotaAt(path string, v1 bool) float64 {
	if !v1 {
		b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", path, "cpu.max"))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b))
		if len(f) != 2 || f[0] == "max" {
			return 0
		}
		q, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || p <= 0 {
			return 0
		}
		return q / p
	}
	dir := filepath.Join("/sys/fs/cgroup/cpu,cpuacct", path)
	qb, err1 := os.ReadFile(dir + "/cpu.cfs_quota_us")
	pb, err2 := os.ReadFile(dir + "/cpu.cfs_period_us")
	if err1 != nil || err2 != nil {
		return 0
	}
	q, _ := strconv.ParseFloat(strings.TrimSpace(string(qb)), 64)
	p, _ := strconv.ParseFloat(strings.TrimSpace(string(pb)), 64)
	if q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}

// schedWait reads a thread's run-queue wait from its schedstat ("run_ns
// wait_ns slices"); 0 when the kernel keeps none.
func schedWait(path string) time.Duration {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	w, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(w)
}
