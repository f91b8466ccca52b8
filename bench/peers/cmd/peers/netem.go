// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/bench/peers/internal/cli"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/server"
)

// neConfig is the emulator comparison's command line.
type neConfig struct {
	rpclab, toxiproxy string
	delays            []time.Duration
	samples           int
	rttBudget         time.Duration
	bulk              time.Duration
	proxyCPUs         string
	msg               int
}

// neRow is one proxy at one delay.
type neRow struct {
	proxy              string
	delay              time.Duration
	samples            int
	errP50, errP99     time.Duration
	bytes              int64
	bulkWall, proxyCPU time.Duration
	err                string
}

func (r neRow) cpuPerGiB() float64 {
	if r.bytes == 0 {
		return math.NaN()
	}
	return r.proxyCPU.Seconds() / (float64(r.bytes) / (1 << 30))
}

func parseNetemFlags(args []string, stderr io.Writer) (*neConfig, error) {
	fs := flag.NewFlagSet("peers netem", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &neConfig{}
	fs.StringVar(&c.rpclab, "rpclab", "", "rpclab binary (runs `rpclab netem`)")
	fs.StringVar(&c.toxiproxy, "toxiproxy", "", "toxiproxy's server binary")
	delays := fs.String("delays", "50us,1ms,16ms", "one-way delays added in each direction (so the added RTT is twice each)")
	fs.IntVar(&c.samples, "samples", 2000, "round trips measured per proxy and delay (fewer if --rtt-seconds runs out)")
	fs.DurationVar(&c.rttBudget, "rtt-seconds", 20*time.Second, "most time spent on the round trips of one proxy at one delay")
	fs.DurationVar(&c.bulk, "bulk", 5*time.Second, "time spent pushing bytes through each proxy at each delay, for its CPU per GiB")
	fs.StringVar(&c.proxyCPUs, "proxy-cpus", "1", "CPUs of both proxies (taskset list); run this program on the others")
	fs.IntVar(&c.msg, "msg", 64, "bytes of each round trip's message")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	for _, f := range strings.Split(*delays, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%w: --delays: %q is not a duration of 0 or more", cli.ErrUsage, f)
		}
		c.delays = append(c.delays, d)
	}
	if c.samples < 10 {
		return nil, fmt.Errorf("%w: --samples %d: want at least 10", cli.ErrUsage, c.samples)
	}
	if c.msg < 1 || c.msg > 1<<20 {
		return nil, fmt.Errorf("%w: --msg %d: want 1..1048576", cli.ErrUsage, c.msg)
	}
	if c.rttBudget <= 0 || c.bulk <= 0 {
		return nil, fmt.Errorf("%w: --rtt-seconds and --bulk must be positive", cli.ErrUsage)
	}
	if _, err := cli.ParseCPUList(c.proxyCPUs); err != nil {
		return nil, fmt.Errorf("--proxy-cpus: %w", err)
	}
	return c, nil
}

func runNetem(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseNetemFlags(args, stderr)
	if err != nil {
		return err
	}
	up, err := startUpstream()
	if err != nil {
		return err
	}
	defer up.Close()
	direct, err := rtts(ctx, up.Addr().String(), c.samples, c.rttBudget, c.msg)
	if err != nil {
		return fmt.Errorf("direct round trips: %w", err)
	}
	base := quantile(direct, 0.5) // nearest rank, as the table's err p50
	fmt.Fprintf(stdout, "emulators: added delay's error (RTT through the proxy - direct RTT %v - 2 x delay) over %d-byte round trips, and the proxy's CPU per GiB pushed one way; proxies on CPUs %s\n",
		base.Round(100*time.Nanosecond), c.msg, c.proxyCPUs)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "delay (one way)\tproxy\tsamples\terr p50\terr p99\tGiB\tMiB/s\tcpu s/GiB\trpclab/x |err p50|\trpclab/x |err p99|\trpclab/x cpu/GiB\tnote\t")
	tox := newToxi(ctx, c)
	defer tox.stop()
	for _, d := range c.delays {
		rows := []neRow{
			measureProxy(ctx, c, "rpclab-netem", d, up, base, startRPCLabNetem),
			measureProxy(ctx, c, "toxiproxy", d, up, base, tox.start),
		}
		printNERows(tw, rows)
	}
	return tw.Flush()
}

func printNERows(w io.Writer, rows []neRow) {
	b := rows[0]
	for _, r := range rows {
		if r.err != "" {
			fmt.Fprintf(w, "%v\t%s\t%sFAILED: %s\t\n", r.delay, r.proxy, strings.Repeat("-\t", 9), r.err)
			continue
		}
		r1, r2, r3 := "-", "-", "-"
		if b.err == "" {
			r1 = ratio(absD(b.errP50), absD(r.errP50))
			r2 = ratio(absD(b.errP99), absD(r.errP99))
			r3 = fmt.Sprintf("%.2f", b.cpuPerGiB()/r.cpuPerGiB())
		}
		gib := float64(r.bytes) / (1 << 30)
		fmt.Fprintf(w, "%v\t%s\t%d\t%v\t%v\t%.2f\t%.0f\t%.2f\t%s\t%s\t%s\t\t\n", r.delay, r.proxy, r.samples,
			r.errP50.Round(time.Microsecond/10), r.errP99.Round(time.Microsecond/10), gib,
			float64(r.bytes)/(1<<20)/r.bulkWall.Seconds(), r.cpuPerGiB(), r1, r2, r3)
	}
	fmt.Fprintln(w, strings.Repeat("\t", 12))
}

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func absD(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// A proxy under test: its address, pid (for its CPU) and how to stop it.
type proxy struct {
	addr string
	pid  int
	stop func()
}

type starter func(ctx context.Context, c *neConfig, upstream string, d time.Duration) (*proxy, error)

func measureProxy(ctx context.Context, c *neConfig, name string, d time.Duration, up *upstream, base time.Duration, start starter) neRow {
	r := neRow{proxy: name, delay: d}
	p, err := start(ctx, c, up.Addr().String(), d)
	if err != nil {
		r.err = err.Error()
		return r
	}
	defer p.stop()
	s, err := rtts(ctx, p.addr, c.samples, c.rttBudget, c.msg)
	if err != nil {
		r.err = "round trips: " + err.Error()
		return r
	}
	errs := make([]time.Duration, len(s))
	for i, x := range s {
		errs[i] = x - base - 2*d
	}
	slices.Sort(errs)
	r.samples = len(errs)
	r.errP50, r.errP99 = quantile(errs, 0.50), quantile(errs, 0.99)
	cpu0, err := procstat.CPUTime(p.pid)
	if err != nil {
		r.err = err.Error()
		return r
	}
	t0 := time.Now()
	n, err := push(ctx, up, p.addr, c.bulk)
	r.bulkWall = time.Since(t0)
	cpu1, err2 := procstat.CPUTime(p.pid)
	if err == nil {
		err = err2
	}
	if err != nil {
		r.err = "bulk: " + err.Error()
		return r
	}
	r.bytes, r.proxyCPU = n, cpu1-cpu0
	return r
}

func startRPCLabNetem(ctx context.Context, c *neConfig, upstream string, d time.Duration) (*proxy, error) {
	if why := cli.Executable(c.rpclab); why != "" {
		return nil, errors.New(why)
	}
	cpus, _ := cli.ParseCPUList(c.proxyCPUs)
	p, err := server.StartProcess(ctx, []string{c.rpclab, "netem", "--listen", "127.0.0.1:0", "--upstream", upstream,
		"--delay", d.String()}, cpus, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &proxy{addr: p.Addr, pid: p.Pid, stop: func() { _ = p.Stop() }}, nil
}

// toxi runs one toxiproxy server for the whole comparison and makes one
// proxy with latency toxics (both directions) per delay through its API.
type toxi struct {
	cmd  *exec.Cmd
	api  string
	err  error
	seq  int
	done chan struct{}
}

func newToxi(ctx context.Context, c *neConfig) *toxi {
	t := &toxi{done: make(chan struct{})}
	if why := cli.Executable(c.toxiproxy); why != "" {
		t.err = errors.New(why)
		return t
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.err = err
		return t
	}
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	_ = lis.Close()
	t.api = "http://127.0.0.1:" + port
	t.cmd = exec.CommandContext(ctx, "taskset", "-c", c.proxyCPUs, c.toxiproxy, "-host", "127.0.0.1", "-port", port)
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	var errb bytes.Buffer
	t.cmd.Stderr = &errb
	if t.err = t.cmd.Start(); t.err != nil {
		return t
	}
	go func() { _ = t.cmd.Wait(); close(t.done) }()
	for i := 0; i < 100; i++ {
		if resp, err := http.Get(t.api + "/version"); err == nil {
			resp.Body.Close()
			return t
		}
		time.Sleep(100 * time.Millisecond)
		select {
		case <-t.done:
			t.err = fmt.Errorf("toxiproxy exited: %s", tail(errb.String(), 200))
			return t
		default:
		}
	}
	t.err = fmt.Errorf("toxiproxy's API did not answer on %s", t.api)
	return t
}

func (t *toxi) stop() {
	if t.cmd != nil && t.cmd.Process != nil {
		_ = t.cmd.Process.Signal(syscall.SIGTERM)
		timer := time.NewTimer(5 * time.Second)
		defer timer.Stop()
		select {
		case <-t.done:
		case <-timer.C:
			_ = t.cmd.Process.Kill()
		}
	}
}

func (t *toxi) start(_ context.Context, _ *neConfig, upstream string, d time.Duration) (*proxy, error) {
	if t.err != nil {
		return nil, t.err
	}
	if d%time.Millisecond != 0 {
		return nil, fmt.Errorf("not representable: toxiproxy's latency toxic takes whole milliseconds, not %v", d)
	}
	t.seq++
	name := "peers" + strconv.Itoa(t.seq)
	var created struct {
		Listen string `json:"listen"`
	}
	if err := t.post("/proxies", map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}, &created); err != nil {
		return nil, err
	}
	for _, stream := range []string{"upstream", "downstream"} {
		toxic := map[string]any{"name": "latency_" + stream, "type": "latency", "stream": stream,
			"attributes": map[string]any{"latency": d.Milliseconds(), "jitter": 0}}
		if err := t.post("/proxies/"+name+"/toxics", toxic, nil); err != nil {
			return nil, err
		}
	}
	return &proxy{addr: created.Listen, pid: t.cmd.Process.Pid, stop: func() {
		req, _ := http.NewRequest(http.MethodDelete, t.api+"/proxies/"+name, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}}, nil
}

func (t *toxi) post(path string, body any, into any) error {
	b, _ := json.Marshal(body)
	resp, err := http.Post(t.api+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("toxiproxy API: %w", err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("toxiproxy API %s: %s: %s", path, resp.Status, tail(string(rb), 200))
	}
	if into != nil {
		if err := json.Unmarshal(rb, into); err != nil {
			return fmt.Errorf("toxiproxy API %s: %w", path, err)
		}
	}
	return nil
}

// upstream is the server behind the proxies: a connection's first byte
// picks echo ('E') or sink ('S': read to EOF, then send the count of bytes
// received on sunk; toxiproxy closes both directions when the client
// closes its side, so the count cannot go back over the connection).
type upstream struct {
	net.Listener
	sunk chan int64
}

func startUpstream() (*upstream, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{Listener: lis, sunk: make(chan int64, 1)}
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			go u.serve(conn)
		}
	}()
	return u, nil
}

func (u *upstream) serve(conn net.Conn) {
	defer conn.Close()
	var mode [1]byte
	if _, err := io.ReadFull(conn, mode[:]); err != nil {
		return
	}
	switch mode[0] {
	case 'E':
		_, _ = io.Copy(conn, conn)
	case 'S':
		n, _ := io.Copy(io.Discard, conn)
		u.sunk <- n + 1 // the mode byte counts: the proxy carried it
	}
}

// rtts measures up to n round trips of msg bytes to an echo upstream
// through addr, stopping early when budget runs out (after at least 10). The
// first few round trips warm the path and are not kept.
func rtts(ctx context.Context, addr string, n int, budget time.Duration, msg int) ([]time.Duration, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte{'E'}); err != nil {
		return nil, err
	}
	buf := make([]byte, msg)
	in := make([]byte, msg)
	end := time.Now().Add(budget)
	_ = conn.SetDeadline(end.Add(10 * time.Second))
	out := make([]time.Duration, 0, n)
	for i := -5; i < n; i++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if i >= 10 && time.Now().After(end) {
			break
		}
		t0 := time.Now()
		if _, err := conn.Write(buf); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(conn, in); err != nil {
			return nil, err
		}
		if i >= 0 {
			out = append(out, time.Since(t0))
		}
	}
	slices.Sort(out)
	return out, nil
}

// push writes to the sink of up through addr for d and returns the bytes
// the upstream received.
func push(ctx context.Context, up *upstream, addr string, d time.Duration) (int64, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte{'S'}); err != nil {
		return 0, err
	}
	buf := make([]byte, 256<<10)
	end := time.Now().Add(d)
	_ = conn.SetDeadline(end.Add(30 * time.Second))
	for time.Now().Before(end) && ctx.Err() == nil {
		if _, err := conn.Write(buf); err != nil {
			return 0, err
		}
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		return 0, err
	}
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case n := <-up.sunk:
		return n, nil
	case <-t.C:
		return 0, errors.New("the upstream saw no end of the bulk stream within 30 s")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// quantile returns the q-quantile of sorted (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
