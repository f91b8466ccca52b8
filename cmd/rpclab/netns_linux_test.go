// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"

	"github.com/rpclab/rpclab/internal/testutil"
)

// requireNetns makes a machine where network namespaces cannot be made a
// failure instead of a skip (scripts/test.sh sets it: CI runs as root).
const requireNetns = "RPCLAB_REQUIRE_NETNS"

// hosts is a set of network namespaces joined by veth pairs on one bridge
// (in a namespace of its own), each namespace a host with one address on
// 10.231.0.0/24: several hosts on one machine.
type hosts struct {
	t      *testing.T
	prefix string
	names  []string // hub first
}

func (h *hosts) ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// newHosts makes n hosts (10.231.0.1 up to .n), or skips the test, with a
// clear message, where namespaces cannot be made (unless requireNetns).
func newHosts(t *testing.T, n int) *hosts {
	t.Helper()
	h := &hosts{t: t, prefix: fmt.Sprintf("rl%d", os.Getpid()%100000)}
	t.Cleanup(h.remove)
	fail := func(err error) {
		t.Helper()
		if os.Getenv(requireNetns) == "1" {
			t.Fatalf("network namespaces: %v", err)
		}
		t.Skipf("network namespaces cannot be made here (needs root and iproute2's ip): %v (set %s=1 to make this a failure)", err, requireNetns)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		fail(err)
	}
	hub := h.prefix + "hub"
	if err := h.ip("netns", "add", hub); err != nil {
		fail(err)
	}
	h.names = append(h.names, hub)
	steps := [][]string{{"-n", hub, "link", "add", "br0", "type", "bridge"}, {"-n", hub, "link", "set", "br0", "up"}}
	for i := 1; i <= n; i++ {
		ns := fmt.Sprintf("%sh%d", h.prefix, i)
		if err := h.ip("netns", "add", ns); err != nil {
			fail(err)
		}
		h.names = append(h.names, ns)
		far, near := fmt.Sprintf("%sb%d", h.prefix, i), "eth0"
		steps = append(steps,
			[]string{"-n", hub, "link", "add", far, "type", "veth", "peer", "name", near, "netns", ns},
			[]string{"-n", hub, "link", "set", far, "master", "br0", "up"},
			[]string{"-n", ns, "addr", "add", h.addr(i) + "/24", "dev", near},
			[]string{"-n", ns, "link", "set", near, "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"})
	}
	for _, s := range steps {
		if err := h.ip(s...); err != nil {
			fail(err)
		}
	}
	return h
}

func (h *hosts) addr(i int) string { return fmt.Sprintf("10.231.0.%d", i) }

func (h *hosts) remove() {
	for _, ns := range h.names {
		_ = h.ip("netns", "del", ns)
	}
}

// start runs rpclab (the test binary as main) inside host i until the
// test ends and returns its stdout.
func (h *hosts) start(ctx context.Context, i int, args ...string) io.Reader {
	h.t.Helper()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.names[i], os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), asMain+"=1", "GORACE=atexit_sleep_ms=0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if h.t.Failed() {
			h.t.Logf("%s in %s: stderr:\n%s", args[0], h.names[i], stderr.String())
		}
	})
	return out
}

// waitLine waits for a line of r starting with prefix.
func waitLine(t *testing.T, r io.Reader, prefix string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			go io.Copy(io.Discard, r)
			return
		}
	}
	t.Fatalf("no line %q: %v", prefix, sc.Err())
}

// TestSweepAcrossNamespaces: the server in one namespace, two rpclab
// workers in two more, the driver in a fourth, all on one bridge. The
// merged count is the sum of the workers', the merged histogram the merge
// of theirs, and each worker's connections are counted inside its own
// namespace (pool:2: 2 each, where one process on one host would see all 4).
func TestSweepAcrossNamespaces(t *testing.T) {
	h := newHosts(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	srv := h.addr(1) + ":50051"
	waitLine(t, h.start(ctx, 1, "serve", "--listen", srv), "")
	w1, w2 := h.addr(2)+":10000", h.addr(3)+":10000"
	waitLine(t, h.start(ctx, 2, "worker", "--driver-port", "10000", "--host", h.addr(2)), "listening on")
	waitLine(t, h.start(ctx, 3, "worker", "--driver-port", "10000", "--host", h.addr(3)), "listening on")
	out := filepath.Join(t.TempDir(), "w.jsonl")
	drv := exec.CommandContext(ctx, "ip", "netns", "exec", h.names[4], os.Args[0], "sweep", "--workers", w1+","+w2, "--target", srv,
		"--conn", "pool:2", "--inflight", "6", "--warmup", "100ms", "--interval", "500ms", "-o", out)
	drv.Env = append(os.Environ(), asMain+"=1", "GORACE=atexit_sleep_ms=0")
	if b, err := drv.CombinedOutput(); err != nil {
		t.Fatalf("the driver: %v\n%s", err, b)
	}
	recs, err := result.ReadFile(out)
	if err != nil || len(recs) != 1 {
		t.Fatalf("got %d records (%v), want 1", len(recs), err)
	}
	rec := recs[0]
	all := stats.Merge().Hist
	var sum int64
	for _, w := range rec.Workers {
		hist, err := stats.DecodeHistogram(w.HistogramHDR)
		if err != nil {
			t.Fatal(err)
		}
		all.Merge(hist)
		sum += w.Requests
		if w.Status != "ok" || w.ConnsObserved != 2 || w.Requests == 0 {
			t.Errorf("%s: got %s with %d connections and %d requests, want ok with 2 (its own namespace's) and some", w.Addr, w.Status, w.ConnsObserved, w.Requests)
		}
	}
	got, err := stats.DecodeHistogram(rec.HistogramHDR)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != result.StatusOK || rec.Requests != sum || got.TotalCount() != all.TotalCount() || rec.Latency != stats.Quantiles(all) || rec.ConnsObserved != 4 {
		t.Errorf("got %s, %d requests, histogram of %d, %d conns; want ok, the sum %d, the merge %d, 4", rec.Status, rec.Requests, got.TotalCount(), rec.ConnsObserved, sum, all.TotalCount())
	}
}
