// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"

	"golang.org/x/sys/unix"
)

func TestParseHexAddr(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"0100007F:C350", "127.0.0.1:50000"},
		{"00000000:0050", "0.0.0.0:80"},
		{"00000000000000000000000001000000:1F90", "[::1]:8080"},
		{"0000000000000000FFFF00000100007F:0016", "127.0.0.1:22"}, // v4-mapped
	}
	for _, tc := range tests {
		got, err := parseHexAddr(tc.in)
		if err != nil {
			t.Errorf("parseHexAddr(%q): %v", tc.in, err)
			continue
		}
		if got != netip.MustParseAddrPort(tc.want) {
			t.Errorf("parseHexAddr(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "0100007F", "XYZ:0050", "0100007F:ZZZZ", "01:0050"} {
		if _, err := parseHexAddr(bad); err == nil {
			t.Errorf("parseHexAddr(%q) = nil error, want an error", bad)
		}
	}
}

func TestConnsToCountsRealConnections(t *testing.T) {
	lis := holdingListener(t)
	target := lis.Addr().String()
	for want := 0; want <= 3; want++ {
		if want > 0 {
			c, err := net.Dial("tcp", target)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
		}
		got, err := ConnsTo(0, target)
		if err != nil {
			t.Fatal(err)
		}
		// The accepted (server) ends are to the client's port, not the
		// target, so only the dialled ends count.
		if got != want {
			t.Errorf("after %d dials, ConnsTo = %d, want %d", want, got, want)
		}
		// Both ways of reading the kernel's sockets agree: sock_diag
		// (ConnsTo's) and the /proc tables (its fallback).
		addrs, err := resolve(target)
		if err != nil {
			t.Fatal(err)
		}
		inodes, err := socketInodes(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		d, derr := diagCount(inodes, addrs)
		tb, terr := tableCount(os.Getpid(), inodes, addrs)
		if derr != nil || terr != nil || d != want || tb != want {
			t.Errorf("after %d dials: sock_diag counted %d (%v), /proc tables %d (%v)", want, d, derr, tb, terr)
		}
		// And so does asking each own descriptor (ConnsTo's way for pid 0).
		if s, err := selfCount(addrs); err != nil || s != want {
			t.Errorf("after %d dials: selfCount counted %d (%v), want %d", want, s, err, want)
		}
	}
	if _, err := ConnsTo(0, "no-port"); err == nil {
		t.Error("ConnsTo(no-port) = nil error, want an error")
	}
}

// TestConnsToAsksOwnSockets: counting this process's connections asks its
// own descriptors, and never dumps the kernel's socket table (a walk of
// every bucket of its connection hash table, about 8 ms, taken from the
// client's CPU in the middle of a measured interval).
func TestConnsToAsksOwnSockets(t *testing.T) {
	lis := holdingListener(t)
	for range 2 {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	dumped := false
	defer func(f func(map[string]bool, map[netip.AddrPort]bool) (int, error)) { dumpCount = f }(dumpCount)
	dumpCount = func(inodes map[string]bool, want map[netip.AddrPort]bool) (int, error) {
		dumped = true
		return diagCount(inodes, want)
	}
	got, err := ConnsTo(0, lis.Addr().String())
	if err != nil || got != 2 {
		t.Errorf("ConnsTo(0) = %d, %v, want 2, nil", got, err)
	}
	if dumped {
		t.Error("ConnsTo(0) dumped the kernel's socket table; want its own descriptors asked")
	}
	// Another process's connections are still read from the table.
	dumped = false
	if _, err := ConnsTo(os.Getppid(), lis.Addr().String()); err == nil && !dumped && sameNetns(os.Getppid()) {
		t.Error("ConnsTo(parent) did not read the kernel's socket table")
	}
}

// TestSelfCountSkipsWhatIsNotAnEstablishedTCPConnection: a listener, a UDP
// socket connected to the target, a file, and a TCP connection the server
// closed (CLOSE_WAIT) are not connections to the target.
func TestSelfCountSkipsWhatIsNotAnEstablishedTCPConnection(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	closeIt := make(chan bool, 1)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			if <-closeIt {
				c.Close()
				continue
			}
			defer c.Close()
		}
	}()
	target := lis.Addr().String()
	want, err := resolve(target)
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		n, err := selfCount(want)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	u, err := net.Dial("udp", target) // a UDP socket whose peer is the target's address
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := count(); got != 0 {
		t.Errorf("with a listener, a UDP socket to the target and a file: got %d, want 0", got)
	}
	closeIt <- false
	kept, err := net.Dial("tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	closeIt <- true
	closed, err := net.Dial("tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	// Wait until the server's close reached the client's end (a read sees
	// EOF), leaving it in CLOSE_WAIT, still with a peer.
	_ = closed.SetReadDeadline(time.Now().Add(testutil.DefaultTimeout))
	if _, err := closed.Read(make([]byte, 1)); err == nil {
		t.Fatal("read on the connection the server closed: got data, want EOF")
	}
	if got := count(); got != 1 {
		t.Errorf("with one established connection and one the server closed: got %d, want 1", got)
	}
}

func TestCPUTime(t *testing.T) {
	self0, err := CPUTime(0)
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := 0; i < 50_000_000; i++ { // burn some CPU
		x += i ^ x
	}
	_ = x
	self1, _ := CPUTime(0)
	if self1 <= self0 {
		t.Errorf("CPU time did not grow: %v then %v", self0, self1)
	}

	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer cmd.Process.Kill()
	if _, err := CPUTime(cmd.Process.Pid); err != nil {
		t.Errorf("CPUTime(child): %v", err)
	}
	if _, err := CPUTime(1 << 30); err == nil {
		t.Error("CPUTime(no such pid) = nil error, want an error")
	}
}

func TestPinAndAllowedCPUs(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil || len(cpus) == 0 {
		t.Fatalf("AllowedCPUs() = %v, %v", cpus, err)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer cmd.Process.Kill()
	// Every CPU but the first, then the first alone: each time every
	// thread of the child has exactly the mask asked for, read back from
	// the kernel and from /proc.
	masks := [][]int{cpus[:1]}
	if len(cpus) > 1 {
		masks = [][]int{cpus[1:], cpus[:1]}
	}
	for _, want := range masks {
		if err := Pin(cmd.Process.Pid, want); err != nil {
			t.Fatalf("Pin(%v): %v", want, err)
		}
		if got := affinity(t, cmd.Process.Pid); !slices.Equal(got, want) {
			t.Errorf("after Pin(%v), sched_getaffinity of the child = %v", want, got)
		}
		if got := cpusAllowedList(t, cmd.Process.Pid); got != listString(want) {
			t.Errorf("after Pin(%v), the child's Cpus_allowed_list = %q, want %q", want, got, listString(want))
		}
	}
	// Pin(0, …) pins this process's own threads; restore after.
	if len(cpus) > 1 {
		defer Pin(0, cpus)
		if err := Pin(0, cpus[:1]); err != nil {
			t.Fatal(err)
		}
		if got, _ := AllowedCPUs(); !slices.Equal(got, cpus[:1]) {
			t.Errorf("after Pin(0, %v), AllowedCPUs() = %v", cpus[:1], got)
		}
	}
}

// affinity reads the CPU mask of pid with sched_getaffinity.
func affinity(t *testing.T, pid int) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		t.Fatal(err)
	}
	var got []int
	for c := range cpuSetSize {
		if set.IsSet(c) {
			got = append(got, c)
		}
	}
	return got
}

// cpusAllowedList is the Cpus_allowed_list line of /proc/PID/status.
func cpusAllowedList(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no Cpus_allowed_list")
	return ""
}

// listString writes cpus as the kernel's list format ("0-2,5").
func listString(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i])+"-"+strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// A goroutine sampling a child pinned to some CPUs runs on the others, and
// only its thread moves.
func TestLockThreadOffCPUsOf(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skip("needs two CPUs")
	}
	cmd := exec.Command("sleep", "5")
	if pinned, err := StartPinned(cmd, cpus[:1]); err != nil || !pinned {
		t.Fatalf("StartPinned: %v, %v", pinned, err)
	}
	defer cmd.Process.Kill()
	type res struct {
		got, mine []int
		err       error
	}
	ch := make(chan res)
	go func() {
		got, restore, err := LockThreadOffCPUsOf(cmd.Process.Pid)
		mine := affinity(t, 0)
		restore()
		ch <- res{got, mine, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := cpus[1:]; !slices.Equal(r.got, want) || !slices.Equal(r.mine, want) {
		t.Errorf("LockThreadOffCPUsOf(child on %v) = %v, the thread's mask %v; want %v", cpus[:1], r.got, r.mine, want)
	}
	if got, _ := AllowedCPUs(); !slices.Equal(got, cpus) {
		t.Errorf("this goroutine's thread has %v after, want %v", got, cpus)
	}
	// A child on every CPU leaves nowhere to go: an error, not a silent stay.
	all := exec.Command("sleep", "5")
	if err := all.Start(); err != nil {
		t.Fatal(err)
	}
	defer all.Process.Kill()
	go func() {
		_, restore, err := LockThreadOffCPUsOf(all.Process.Pid)
		restore()
		ch <- res{err: err}
	}()
	if r := <-ch; r.err == nil {
		t.Error("LockThreadOffCPUsOf(child on every CPU) = nil error, want one")
	}
}

func TestReadUsage(t *testing.T) {
	u0, err := ReadUsage()
	if err != nil {
		t.Fatal(err)
	}
	sink := make([][]byte, 0, 100)
	for range 100 {
		sink = append(sink, make([]byte, 64<<10))
	}
	x := 0
	for i := 0; i < 20_000_000; i++ {
		x += i ^ x
	}
	_ = x
	u1, err := ReadUsage()
	if err != nil {
		t.Fatal(err)
	}
	if u1.CPU <= u0.CPU {
		t.Errorf("CPU did not grow: %v then %v", u0.CPU, u1.CPU)
	}
	if d := u1.AllocBytes - u0.AllocBytes; d < 100*64<<10 {
		t.Errorf("allocations grew by %d bytes after allocating %d", d, 100*64<<10)
	}
	if u1.PeakRSS < 100*64<<10 || u1.PeakRSS < u0.PeakRSS {
		t.Errorf("PeakRSS = %d then %d, want at least the %d bytes held", u0.PeakRSS, u1.PeakRSS, 100*64<<10)
	}
	if !ResetPeakRSS() {
		t.Log("clear_refs refused; the reset is not checked")
	}
	_ = sink
}

// A child started pinned sees its mask from its first instruction, and the
// parent keeps every CPU it had.
func TestStartPinned(t *testing.T) {
	before, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	last := before[len(before)-1]
	var out strings.Builder
	cmd := exec.Command("grep", "Cpus_allowed_list", "/proc/self/status")
	cmd.Stdout = &out
	if pinned, err := StartPinned(cmd, []int{last}); err != nil || !pinned {
		t.Fatalf("StartPinned: pinned %v, %v", pinned, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(out.String()), []string{"Cpus_allowed_list:", strconv.Itoa(last)}; !slices.Equal(got, want) {
		t.Errorf("the child saw %q, want %q", got, want)
	}
	// A CPU this process may not use: started, unpinned.
	cmd = exec.Command("true")
	if pinned, err := StartPinned(cmd, []int{1023}); err != nil || pinned {
		t.Errorf("StartPinned on CPU 1023: pinned %v, %v; want started unpinned", pinned, err)
	} else if err := cmd.Wait(); err != nil {
		t.Error(err)
	}
	// Every thread of this process still has the whole mask.
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err != nil {
			continue // the thread has exited
		}
		if set.Count() != len(before) {
			t.Errorf("thread %d has %d CPUs after StartPinned, want %d", tid, set.Count(), len(before))
		}
	}
}

// TestLockThreadOffKeepsChildrenOfTheThread: a child started with
// DieWithParent from a thread is sent SIGTERM when that thread ends, and a
// goroutine that returns while locked to its thread ends it. Sampling from
// the thread a child server was started from (LockThreadOffCPUsOf) must
// therefore give the thread back (restore), or the server stops mid-sweep
// (CI saw "the server exited during the run: exit status 0").
func TestLockThreadOffKeepsChildrenOfTheThread(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skip("needs two CPUs")
	}
	pinned := exec.Command("sleep", "30") // a process to move off of
	if ok, err := StartPinned(pinned, cpus[:1]); err != nil || !ok {
		t.Fatalf("StartPinned: %v, %v", ok, err)
	}
	defer pinned.Process.Kill()
	child := exec.Command("sleep", "30")
	child.SysProcAttr = DieWithParent(nil)
	started := make(chan error)
	testDone := make(chan struct{})
	defer close(testDone)
	errMainThread := errors.New("on the main thread")
	for try := 0; ; try++ {
		go func() {
			// One thread starts the child and then samples, as a session's
			// server start and an external client's sampler may share one.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			// The runtime never ends the main thread: the test needs
			// another, so this goroutine keeps the main thread busy until
			// the test ends and the next try runs elsewhere.
			if unix.Gettid() == os.Getpid() {
				started <- errMainThread
				<-testDone
				return
			}
			if err := child.Start(); err != nil {
				started <- err
				return
			}
			_, restore, err := LockThreadOffCPUsOf(pinned.Process.Pid)
			restore()
			started <- err
		}()
		err := <-started
		if errors.Is(err, errMainThread) && try < 10 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	defer child.Process.Kill()
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	timer := time.NewTimer(500 * time.Millisecond)
	defer timer.Stop()
	select {
	case err := <-exited:
		t.Fatalf("the child started from the sampling thread ended (%v), want it running", err)
	case <-timer.C:
	}
}

// holdingListener listens on loopback and accepts every connection, holding
// each open until the test ends.
func holdingListener(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	return lis
}
