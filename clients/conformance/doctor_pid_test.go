// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
)

// pidLayout is one layout a client runs while doctor --pid watches it:
// the channels it opens and the connections the kernel must see at
// in-flight 4, and whether the verdict must name the trap from the
// kernel alone and with channelz.
type pidLayout struct {
	conn                   string
	chans, conns           int
	trapKernel, trapWithCz bool
}

// The layouts of a C-core style stack (C++, grpcio, grpc-js): its
// channel-per-worker is four channels on one connection, the trap; a
// pool of 4 is four connections, not the trap. Its shared channel is one
// connection too, which from the kernel alone is "likely the trap" (one
// channel and four on one connection look alike from outside); channelz
// shows the one channel, not the trap. The layouts of a stack that opens
// a connection per channel (grpc-java, tonic): per-worker is four
// channels on four connections, not the trap.
var (
	pidCCore = []pidLayout{{"shared", 1, 1, true, false}, {"channel-per-worker", 4, 1, true, true}, {"pool:4", 4, 4, false, false}}
	pidOwn   = []pidLayout{{"shared", 1, 1, false, false}, {"per-worker", 4, 4, false, false}, {"pool:4", 4, 4, false, false}}
)

// doctorVerdictRE captures the verdict's kind and sentence.
var doctorVerdictRE = regexp.MustCompile(`(?m)^Verdict \(([a-z-]+)\): (.*)$`)

// testDoctorPID attaches `rpclab doctor --pid` to lang's client running
// one step of each layout (unary, in-flight 4) against a server that
// holds each reply 2 ms: the connections doctor reports to the target
// equal the kernel's count (procstat.ConnsTo, before and after the
// window) and the layout's; the verdict names the trap where the layout
// is the trap and not elsewhere, from the kernel alone and, when the
// client serves channelz (--channelz-port), from channelz too. Each
// window's figures are logged.
func testDoctorPID(t *testing.T, lang string, channelz bool, layouts []pidLayout) {
	selected(t, lang)
	conns := make([]string, len(layouts))
	for i, l := range layouts {
		conns[i] = l.conn
	}
	build(t, lang, conns...)
	if channelz && lang == "python" && exec.Command(filepath.Join("..", "python", ".venv", "bin", "python"), "-c", "import grpc_channelz").Run() != nil {
		t.Log("grpcio-channelz is not installed in clients/python/.venv (pip install -e '.[channelz]'): the kernel's view only")
		channelz = false
	}
	target, srv := serveCounting(t)
	for _, l := range layouts {
		t.Run(l.conn, func(t *testing.T) {
			cz := ""
			if channelz {
				cz = freePort(t)
			}
			pid := startStep(t, lang, target, srv, l.conn, cz, l.conns)
			runs := []string{""}
			if channelz {
				runs = append(runs, "127.0.0.1:"+cz)
			}
			for _, czAddr := range runs {
				w := doctorPID(t, pid, target, czAddr)
				t.Logf("%s %s, channelz %q: doctor %d connection(s), kernel %v, channelz %d channel(s) on %d socket(s); busiest thread %s; Verdict (%s): %s",
					lang, l.conn, czAddr, w.conns, w.kernel, w.czChans, w.czSocks, w.thread, w.kind, w.text)
				if w.kernel[0] != l.conns || w.kernel[1] != l.conns {
					t.Errorf("channelz %q: the kernel saw %v connections to %s, want %d", czAddr, w.kernel, target, l.conns)
				}
				if w.conns != w.kernel[0] || w.conns != w.kernel[1] {
					t.Errorf("channelz %q: doctor reported %d connections to %s, the kernel %v", czAddr, w.conns, target, w.kernel)
				}
				if czAddr != "" && (w.czChans != l.chans || w.czSocks != l.conns) {
					t.Errorf("channelz %q: doctor read %d channels on %d sockets to %s, want %d on %d", czAddr, w.czChans, w.czSocks, target, l.chans, l.conns)
				}
				trap := l.trapKernel
				if czAddr != "" {
					trap = l.trapWithCz
				}
				if (w.kind == "trap") != trap {
					t.Errorf("channelz %q: got Verdict (%s): %s; want the trap: %v", czAddr, w.kind, w.text, trap)
				}
				if trap && czAddr != "" && !strings.Contains(w.text, "4 channels to "+target+" share 1 connection(s)") {
					t.Errorf("channelz %q: the trap's verdict does not say 4 channels share 1 connection: %s", czAddr, w.text)
				}
			}
		})
	}
}

// connCounter counts the connections a server accepted and those still
// open.
type connCounter struct {
	net.Listener
	accepted, open atomic.Int64
}

func (l *connCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	l.open.Add(1)
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *connCounter
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// serveCounting serves rpclab's server, holding each reply 2 ms, on a
// loopback port until the test ends, counting its connections.
func serveCounting(t *testing.T) (string, *connCounter) {
	t.Helper()
	lis := &connCounter{Listener: testutil.Listen(t)}
	s := server.New(server.Options{Delay: 2 * time.Millisecond})
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String(), lis
}

// preStepConns is the connections a client opens to the target before
// its first step: the Node client's JIT warm-up runs 4 s on a shared
// channel (the Java client's is turned off: RPCLAB_JAVA_JIT_WARMUP_MS).
var preStepConns = map[string]int64{"node": 1}

// freePort returns a loopback TCP port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	lis := testutil.Listen(t)
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	lis.Close()
	return port
}

// startStep starts lang's client on one step of conn (unary, in-flight
// 4, a 10-minute interval), serving channelz on czPort when given, and
// returns its PID once the step's connections are up: the server has
// accepted the client's connections before its step (preStepConns) and
// the step's, holds want open, and the kernel sees want from the client
// to target. The client is stopped (SIGTERM) when the test ends.
func startStep(t *testing.T, lang, target string, srv *connCounter, conn, czPort string, want int) int {
	t.Helper()
	ctx := testutil.LongContext(t)
	var extra []string
	if czPort != "" {
		extra = []string{"--channelz-port", czPort}
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	args := stepsArgs(t, &loadgen.Spec{Target: target, RPCs: []string{loadgen.Unary}, Inflight: []int{4},
		Warmup: 200 * time.Millisecond, Interval: 10 * time.Minute}, []string{conn}, out, extra...)
	cmd := exec.CommandContext(ctx, filepath.Join("..", lang, "rpclab-client"), args...)
	// The Java client's JIT warm-up opens channels of its own before the step.
	cmd.Env = append(os.Environ(), "RPCLAB_JAVA_JIT_WARMUP_MS=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 10 * time.Second
	before := srv.accepted.Load()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	pid := cmd.Process.Pid
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if srv.accepted.Load()-before >= preStepConns[lang]+int64(want) && srv.open.Load() == int64(want) {
			if n, err := procstat.ConnsTo(pid, target); err == nil && n == want {
				return pid
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s %s: the kernel never saw %d connections to %s; stderr:\n%s", lang, conn, want, target, stderr.String())
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("%s %s: the client exited (%v) before the kernel saw %d connections to %s; stderr:\n%s", lang, conn, err, want, target, stderr.String())
		case <-tick.C:
		}
	}
}

// pidWindow is what one doctor --pid window said of a client: its
// verdict's kind and sentence, the connections to the target in its
// record, the kernel's count of them before and after the window, the
// channelz channels reaching the target and their sockets (with
// --channelz), and the busiest thread.
type pidWindow struct {
	kind, text       string
	conns            int
	kernel           [2]int
	czChans, czSocks int
	thread           string
}

// doctorPID runs `rpclab doctor --pid pid --window 2s` with --channelz
// cz, or off when cz is empty, and returns what it said of target.
func doctorPID(t *testing.T, pid int, target, cz string) (w pidWindow) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "live.jsonl")
	args := []string{"doctor", "--pid", strconv.Itoa(pid), "--window", "2s", "-o", rec}
	if cz == "" {
		cz = "off" // the kernel only: no listening port is asked
	}
	args = append(args, "--channelz", cz)
	var err error
	if w.kernel[0], err = procstat.ConnsTo(pid, target); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := rpclab(t, time.Minute, args...)
	if w.kernel[1], err = procstat.ConnsTo(pid, target); err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Fatalf("doctor %v: exit %d; stderr:\n%s\nstdout:\n%s", args, code, stderr, stdout)
	}
	m := doctorVerdictRE.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("doctor %v: no verdict in\n%s", args, stdout)
	}
	w.kind, w.text = m[1], m[2]
	live := readLive(t, rec)
	for _, c := range live.Conns {
		if c.Remote == target {
			w.conns++
		}
	}
	if len(live.CPU.Threads) > 0 {
		th := live.CPU.Threads[0]
		w.thread = fmt.Sprintf("%q %.2f of a core", th.Name, float64(th.CPUNS)/float64(live.DurationNS))
	}
	if live.Channelz != nil {
		w.czChans, w.czSocks = channelzTo(live.Channelz, target)
	}
	return w
}

// readLive reads the one live record of a doctor --pid -o file.
func readLive(t *testing.T, path string) result.LiveRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var live result.LiveRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	if !sc.Scan() {
		t.Fatalf("no record in %s", path)
	}
	if err := json.Unmarshal(sc.Bytes(), &live); err != nil {
		t.Fatal(err)
	}
	return live
}

// channelzTo counts the channelz top channels with a socket to target,
// and those sockets.
func channelzTo(cz *result.LiveChannelz, target string) (chans, socks int) {
	toTarget := map[int64]bool{}
	for _, s := range cz.Sockets {
		if s.Remote == target {
			toTarget[s.ID] = true
		}
	}
	subs := map[int64][]int64{}
	for _, s := range cz.Subchannels {
		subs[s.ID] = s.Sockets
	}
	for _, ch := range cz.Channels {
		if slices.ContainsFunc(ch.Subchannels, func(id int64) bool { return slices.ContainsFunc(subs[id], func(s int64) bool { return toTarget[s] }) }) {
			chans++
		}
	}
	return chans, len(toTarget)
}

// TestDoctorPIDCpp: doctor --pid on the C++ client (C-core), with its
// channelz (--channelz-port, grpcpp_channelz) and without.
func TestDoctorPIDCpp(t *testing.T) { testDoctorPID(t, "cpp", true, pidCCore) }

// TestDoctorPIDJava: doctor --pid on the Java client, with its channelz
// (--channelz-port, grpc-services' ChannelzService) and without; its
// channel a worker is a connection a worker, not the trap.
func TestDoctorPIDJava(t *testing.T) { testDoctorPID(t, "java", true, pidOwn) }

// TestDoctorPIDRust: doctor --pid on the Rust client (tonic, which has no
// channelz): the kernel's view alone.
func TestDoctorPIDRust(t *testing.T) { testDoctorPID(t, "rust", false, pidOwn) }

// TestDoctorPIDPython and TestDoctorPIDNode: the same on grpcio and
// grpc-js, whose clients serve channelz already.
func TestDoctorPIDPython(t *testing.T) { testDoctorPID(t, "python", true, pidCCore) }

func TestDoctorPIDNode(t *testing.T) { testDoctorPID(t, "node", true, pidCCore) }
