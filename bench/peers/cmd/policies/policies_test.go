// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/bench/peers/policy"
	"github.com/rpclab/rpclab/pool"
)

// TestPoliciesBadFlags: each bad `policies run` flag is a usage error
// (exit 2) naming it, before any server starts.
func TestPoliciesBadFlags(t *testing.T) {
	self, err := os.Executable() // any executable stands for --rpclab
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown policy", []string{"--policies", "rpclab,grpc-gcp"}, "--policies"},
		{"max 0", []string{"--max", "0"}, "--max"},
		{"no interval", []string{"--interval", "0s"}, "--interval"},
		{"no repeats", []string{"--repeats", "0"}, "--repeats"},
		{"bad in-flight", []string{"--inflight", "1,x"}, "--inflight"},
		{"no server", []string{"--rpclab", ""}, "--rpclab"},
		{"bad rate", []string{"--rate", "fast"}, "--rate"},
		{"bare small rate", []string{"--rate", "2000"}, "--rate"},
		{"negative delay", []string{"--delay", "-1ms"}, "--delay"},
		{"negative payload", []string{"--payload", "-1"}, "--payload"},
		{"payload past 4 MiB", []string{"--payload", "4194305"}, "--payload"},
		{"events file in no directory", []string{"--events", "/nonexistent/dir/events.tsv"}, "--events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--rpclab", self}, tc.args...)
			var stdout, stderr bytes.Buffer
			if code := run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("got exit %d, %q; want exit 2 naming %s", code, stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("got output %q before the flags were checked", stdout.String())
			}
		})
	}
}

// TestWritePolicyEvents: --events writes every run's decisions under its
// policy, in-flight count and repeat (counted per policy and count, in the
// order the runs ran), each timed from the run's measured interval, the
// warm-up's negative.
func TestWritePolicyEvents(t *testing.T) {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	const limit, noGain, settled, gain = "limit", "no gain", "settled", "gain"
	ev := func(at time.Duration, from, to int, r string) pool.Event {
		return pool.Event{At: start.Add(at), From: from, To: to, Reason: r, MeanInFlight: 63.5, Throughput: 2300}
	}
	runs := []policy.PolicyRun{
		{Policy: "rpclab", Inflight: 64, Start: start, Events: []pool.Event{ev(-90*time.Second, 1, 2, limit)}},
		{Policy: "spanner", Inflight: 64, Start: start},
		{Policy: "rpclab", Inflight: 64, Start: start.Add(time.Hour), Events: []pool.Event{
			ev(time.Hour-3*time.Second, 8, 7, noGain),
			ev(time.Hour+2*time.Second, 7, 7, settled),
		}},
		{Policy: "rpclab", Inflight: 8, Start: start, Events: []pool.Event{ev(time.Second, 5, 5, gain)}},
	}
	path := filepath.Join(t.TempDir(), "events.tsv")
	if err := writePolicyEvents(path, runs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "policy\tinflight\trepeat\tat s\t") {
		t.Fatalf("got %d lines, want a header naming the run and 4 events:\n%s", len(lines), b)
	}
	for i, want := range []string{
		"rpclab\t64\t1\t-90.0\t1\t2\tgrow\t" + limit + "\t63.5\t",
		"rpclab\t64\t2\t-3.0\t8\t7\tshrink\t" + noGain + "\t",
		"rpclab\t64\t2\t2.0\t7\t7\thold\t",
		"rpclab\t8\t1\t1.0\t5\t5\thold\t",
	} {
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("line %d: got %q, want it to start %q", i+1, lines[i+1], want)
		}
	}
	if err := writePolicyEvents(filepath.Join(t.TempDir(), "no", "dir.tsv"), runs); err == nil || !strings.Contains(err.Error(), "--events") {
		t.Errorf("an unwritable file: got %v, want an error naming --events", err)
	}
}
