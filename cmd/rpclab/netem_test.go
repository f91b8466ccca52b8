// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"

	"github.com/rpclab/rpclab/internal/testutil"
)

func TestNetemBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative delay", []string{"netem", "--upstream", "127.0.0.1:1", "--delay=-1ms"}, "--delay: negative delay -1ms"},
		{"negative down delay", []string{"netem", "--upstream", "127.0.0.1:1", "--down-delay=-1us"}, "--down-delay: negative delay -1µs"},
		{"negative jitter", []string{"netem", "--upstream", "127.0.0.1:1", "--jitter=-1us"}, "--jitter: negative jitter -1µs"},
		{"rate without a unit", []string{"netem", "--upstream", "127.0.0.1:1", "--rate", "2000"}, "--rate: netem: bad rate \"2000\": a number without a unit is bits per second, 2kbit here"},
		{"selftest extra argument", []string{"netem", "selftest", "extra"}, "unknown command"},
		{"rate in words", []string{"netem", "--upstream", "127.0.0.1:1", "--rate", "1 gigabit"}, "--rate"},
		{"no upstream", []string{"netem", "--delay", "1ms"}, "--upstream"},
		{"upstream without port", []string{"netem", "--upstream", "localhost"}, "missing port"},
		{"zero queue", []string{"netem", "--upstream", "127.0.0.1:1", "--netem-queue", "0"}, "--netem-queue"},
		{"sweep negative delay", []string{"sweep", "--delay=-2.5ms"}, "negative delay"},
		{"sweep bad rate", []string{"sweep", "--rate", "fast"}, "--rate"},
		{"sweep rate without a unit", []string{"sweep", "--rate", "2000"}, "--rate: netem: bad rate \"2000\": a number without a unit is bits per second, 2kbit here, slower than any link rpclab studies; write the unit: 2000mbit"},
		{"selftest negative rtt", []string{"netem", "selftest", "--rtt=-1ms", "--bulk", "0"}, "negative RTT"},
		{"selftest bad bulk", []string{"netem", "selftest", "--bulk", "lots"}, "--bulk"},
	}
	// A proxy in front of itself would dial itself until out of files.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	self := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(self)
	for _, up := range []string{self, "localhost:" + port} {
		tests = append(tests, struct {
			name string
			args []string
			want string
		}{"upstream is itself: " + up, []string{"netem", "--listen", self, "--upstream", up}, "--upstream: netem: the upstream is the proxy itself"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d and an error naming %s", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// TestNetemProxyCommand runs "rpclab netem" as a process in front of a TCP
// echo server and talks through it with a plain TCP client.
func TestNetemProxyCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	cmd := rpclabCmd(ctx, "netem", "--listen", "127.0.0.1:0", "--upstream", lis.Addr().String(), "--delay", "500us", "--rate", "1gbit")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, server.ListeningPrefix) {
		t.Fatalf("first line %q, %v; want %q ADDR", line, err, server.ListeningPrefix)
	}
	c, err := net.Dial("tcp", strings.TrimSpace(strings.TrimPrefix(line, server.ListeningPrefix)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testutil.LongTimeout))
	start := time.Now()
	if _, err := c.Write([]byte("ping through netem")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("ping through netem"))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping through netem" {
		t.Fatalf("got %q, %v; want the echo", buf, err)
	}
	// The delay is a floor, never a ceiling we assert.
	if rtt := time.Since(start); rtt < time.Millisecond {
		t.Errorf("round trip through a 500us+500us link took %v, want at least 1ms", rtt)
	}
}

// TestSlowRateHint: when every step failed behind a rate below 1 Mbit/s,
// the hint names the flag, says the rate with its unit, and offers the
// mbit one; otherwise there is none (issue 16: "--rate 2000", read as 2
// kbit/s, deserves a hint when every step fails).
func TestSlowRateHint(t *testing.T) {
	failed, ok := result.Record{Status: result.StatusFailed}, result.Record{Status: result.StatusOK}
	tests := []struct {
		name string
		args []string
		recs []result.Record
		want string
	}{
		{"bits", []string{"--rate", "2000bit"}, []result.Record{failed, failed},
			"every step failed, and --rate 2000bit is 2 kbit/s (250 bytes/s) per direction, slower than any link rpclab studies; did you mean 2000mbit?"},
		{"kbit down", []string{"--down-rate", "64kbit"}, []result.Record{failed},
			"every step failed, and --down-rate 64kbit is 64 kbit/s (8000 bytes/s) per direction, slower than any link rpclab studies; did you mean 64mbit?"},
		{"bytes", []string{"--rate", "100bps"}, []result.Record{failed},
			"every step failed, and --rate 100bps is 800 bit/s (100 bytes/s) per direction, slower than any link rpclab studies; did you mean 100mbit?"},
		{"one step ok", []string{"--rate", "2000bit"}, []result.Record{failed, ok}, ""},
		{"no step", []string{"--rate", "2000bit"}, nil, ""},
		{"1 Mbit/s is no hint", []string{"--rate", "1mbit"}, []result.Record{failed}, ""},
		{"unlimited", []string{"--rate", "0"}, []result.Record{failed}, ""},
		{"no rate", []string{"--delay", "1ms"}, []result.Record{failed}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var nf netemFlags
			fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
			nf.register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if got := nf.slowRateHint(fs, tc.recs); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSweepSlowRateHints: a sweep whose every step fails behind --rate
// 2000bit prints the hint, and exits 1 with the failed step kept.
func TestSweepSlowRateHints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	cmd := rpclabCmd(ctx, "sweep", "--rate", "2000bit", "--payload", "4KiB", "--conn", "shared", "--inflight", "1",
		"--warmup", "0s", "--interval", "300ms", "--no-pin")
	b, err := cmd.CombinedOutput()
	want := "rpclab: hint: every step failed, and --rate 2000bit is 2 kbit/s"
	if cmd.ProcessState.ExitCode() != exitFailure || !strings.Contains(string(b), want) {
		t.Errorf("got %v and\n%s\nwant exit %d and %q", err, b, exitFailure, want)
	}
}

// TestSweepWithDelay puts the proxy between the sweep's client and server
// and checks the records: spec.netem is filled in, the target is the
// proxy (which the client's one connection goes to), and they validate.
func TestSweepWithDelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "netem.jsonl")
	cmd := rpclabCmd(ctx, "sweep", "--delay", "1ms", "--rate", "1gbit", "--conn", "shared", "--inflight", "2",
		"--warmup", "100ms", "--interval", "500ms", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sweep: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r result.Record
	if err := json.NewDecoder(f).Decode(&r); err != nil {
		t.Fatal(err)
	}
	n := r.Spec.Netem
	if n == nil {
		t.Fatalf("got no spec.netem in %+v", r.Spec)
	}
	want := result.NetemLink{DelayNS: int64(time.Millisecond), RateBps: 1e9}
	if n.Up != want || n.Down != want {
		t.Errorf("got netem up %+v down %+v, want both %+v", n.Up, n.Down, want)
	}
	if n.Upstream == "" || n.Upstream == r.Spec.Target {
		t.Errorf("got upstream %q and target %q, want the server behind the proxy", n.Upstream, r.Spec.Target)
	}
	if r.ConnsObserved != 1 {
		t.Errorf("got conns_observed %d, want 1 (the shared connection to the proxy)", r.ConnsObserved)
	}
	if r.Latency.MinNS < int64(2*time.Millisecond) {
		t.Errorf("got min latency %v through a 2 ms RTT, want at least 2ms", time.Duration(r.Latency.MinNS))
	}
	code, _, stderr := runInProcess("validate", out)
	if code != exitOK {
		t.Errorf("validate: exit %d: %s", code, stderr)
	}
}

// TestServeHelpBindsLoopback: serve's default address and every example
// of its help without TLS bind loopback (issue 16: the help's own
// "serve --listen :0" served everyone, with no TLS or auth).
func TestServeHelpBindsLoopback(t *testing.T) {
	cmd := newServeCmd()
	loopback := func(addr string) bool {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return false
		}
		ip := net.ParseIP(host)
		return host == "localhost" || (ip != nil && ip.IsLoopback())
	}
	if def := cmd.Flags().Lookup("listen").DefValue; !loopback(def) {
		t.Errorf("got --listen default %q, want a loopback address", def)
	}
	for _, line := range strings.Split(cmd.Example, "\n") {
		f := strings.Fields(line)
		i := slices.Index(f, "--listen")
		if i < 0 || slices.Contains(f, "--tls-cert") {
			continue
		}
		if i+1 >= len(f) || !loopback(f[i+1]) {
			t.Errorf("example %q listens beyond loopback without TLS", strings.TrimSpace(line))
		}
	}
}

func TestServeBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"certificate without key", []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key"},
		{"missing certificate", []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"}, "/nonexistent/c.pem"},
		{"negative max bulk size", []string{"serve", "--listen", "127.0.0.1:0", "--max-bulk-size", "-1"}, "--max-bulk-size"},
		{"negative bulk conns", []string{"serve", "--listen", "127.0.0.1:0", "--max-bulk-conns", "-1"}, "--max-bulk-conns: server: bad option: maximum bulk connections -1"},
		{"negative bulk read timeout", []string{"serve", "--listen", "127.0.0.1:0", "--bulk-read-timeout", "-1s"}, "--bulk-read-timeout: server: bad option"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d and a message naming %s", code, stderr, exitUsage, tc.want)
			}
		})
	}
}
