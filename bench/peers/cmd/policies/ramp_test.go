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

// TestRampBadFlags: each bad `policies ramp` flag is a usage error (exit 2)
// naming it, before any server starts.
func TestRampBadFlags(t *testing.T) {
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
		{"zero rate", []string{"--rates", "5000,0"}, "--rates"},
		{"bad rate", []string{"--rates", "5k"}, "--rates"},
		{"bad fixed", []string{"--fixed", "1,0"}, "--fixed"},
		{"no step", []string{"--step", "0s"}, "--step"},
		{"negative tail", []string{"--tail", "-1s"}, "--tail"},
		{"negative warm-up", []string{"--warmup", "-1s"}, "--warmup"},
		{"max 0", []string{"--max", "0"}, "--max"},
		{"no outstanding", []string{"--max-outstanding", "0"}, "--max-outstanding"},
		{"no repeat", []string{"--repeats", "0"}, "--repeats"},
		{"no server", []string{"--rpclab", ""}, "--rpclab"},
		{"events file in no directory", []string{"--events", "/nonexistent/dir/events.tsv"}, "--events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"ramp", "--rpclab", self}, tc.args...)
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

// TestParsePoliciesRetired: --policies refuses the names of retired
// controls (rpclab's earlier rules are gone) naming the flag.
func TestParsePoliciesRetired(t *testing.T) {
	if _, err := parsePolicies("rpclab,rpclab-p"); err == nil || !strings.Contains(err.Error(), "--policies") {
		t.Errorf("got %v, want an error naming --policies", err)
	}
	if names := strings.Join(policyNames(), ","); names != "rpclab,spanner,a105,yarpc" {
		t.Errorf("default policies: got %v", names)
	}
}

// TestPrintRampsRatio: each step's P99 is set over the least P99 of the
// fixed sizes at that step, and the summary says when an adaptive pool
// was back at its min.
func TestPrintRampsRatio(t *testing.T) {
	step := func(p99 time.Duration, conns int) policy.RampStep {
		return policy.RampStep{Offered: 1000, Achieved: 1000, P99: p99, Conns: conns, MaxConns: conns}
	}
	ramps := []policy.Ramp{
		{Policy: "pool:1", Steps: []policy.RampStep{step(200*time.Microsecond, 1)}},
		{Policy: "pool:2", Steps: []policy.RampStep{step(100*time.Microsecond, 2)}},
		{Policy: "rpclab", Steps: []policy.RampStep{step(110*time.Microsecond, 2)}, Adaptive: true, Min: 1, BackAtMin: true, BackToMin: 1500 * time.Millisecond},
		{Policy: "a105", Steps: []policy.RampStep{step(300*time.Microsecond, 1)}, Adaptive: true, Min: 1},
		{Policy: "yarpc", Steps: []policy.RampStep{step(300*time.Microsecond, 1)}, Adaptive: true, Min: 1, BackAtMin: true},
	}
	var out bytes.Buffer
	if err := printRamps(&out, ramps, 2); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*struct{ run, field string }{
		{"pool:1", "2.00"}, {"pool:2", "1.00"}, {"rpclab", "1.10"}, {"a105", "3.00"},
	} {
		if !hasRow(out.String(), want.run, want.field) {
			t.Errorf("got\n%s\nwant %s's row with x best fixed %s", out.String(), want.run, want.field)
		}
	}
	for _, want := range []*struct{ run, field string }{
		{"rpclab", "1.5 s"}, {"a105", "not by the end"}, {"yarpc", "never grew"}, {"pool:2", "- (fixed)"},
	} {
		if !hasRow(out.String(), want.run, want.field) {
			t.Errorf("got\n%s\nwant %s's summary to say %q", out.String(), want.run, want.field)
		}
	}
}

// TestPrintRampMedians: with repeats, each step's P99 is the median of its
// repeats (not their mean or least), set over the least median of the
// fixed sizes; the range and each repeat's size are shown, failures
// summed, and the summary counts the steps within 10% of the best fixed
// size.
func TestPrintRampMedians(t *testing.T) {
	ramp := func(name string, adaptive bool, conns int, failed int64, p99 ...time.Duration) policy.Ramp {
		r := policy.Ramp{Policy: name, Adaptive: adaptive, Min: 1, BackAtMin: adaptive, BackToMin: 2 * time.Second}
		for _, p := range p99 {
			r.Steps = append(r.Steps, policy.RampStep{Offered: 1000, Achieved: 1000, P99: p, Conns: conns, MaxConns: conns, Failed: failed})
		}
		return r
	}
	us := time.Microsecond
	byRun := [][]policy.Ramp{
		// pool:1's medians: 100 then 200 µs (its first repeat's: 1000 and 150).
		{ramp("pool:1", false, 1, 0, 1000*us, 150*us), ramp("pool:1", false, 1, 0, 100*us, 200*us), ramp("pool:1", false, 1, 0, 90*us, 250*us)},
		// rpclab's medians: 105 (1.05, within 10%) then 300 µs (1.50).
		{ramp("rpclab", true, 3, 1, 50*us, 900*us), ramp("rpclab", true, 2, 0, 105*us, 300*us), ramp("rpclab", true, 2, 0, 2000*us, 100*us)},
	}
	byRun[1][0].BackToMin = 3 * time.Second // each repeat's, two alike beside a third
	var out bytes.Buffer
	if err := printRampMedians(&out, byRun, 1); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []*struct{ run, field string }{
		{"rpclab", " 1.05 "}, {"rpclab", " 1.50 "}, {"rpclab", "50-2000"}, {"rpclab", "100-900"}, {"rpclab", "3,2,2"},
		{"pool:1", "90-1000"}, {"rpclab", "1 of 2"}, {"pool:1", "2 of 2"}, {"rpclab", "3.0 s, 2.0 s, 2.0 s"}, {"pool:1", "- (fixed)   "},
	} {
		if !hasRow(got, want.run, want.field) {
			t.Errorf("got\n%s\nwant a row of %s holding %q", got, want.run, want.field)
		}
	}
	// Failures are summed over the repeats: one in each of rpclab's two
	// steps of its first repeat.
	for _, l := range strings.Split(got, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "rpclab" && strings.HasSuffix(l, "of 2") && f[3] != "2" {
			t.Errorf("got summary %q, want 2 failed", l)
		}
	}
}

// hasRow reports whether a line of out names run and holds field.
func hasRow(out, run, field string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(" "+l+" ", " "+run+" ") && strings.Contains(l, field) {
			return true
		}
	}
	return false
}

// TestWriteRampEvents: --events writes every adaptive ramp's decisions,
// each timed from the ramp's first step and labelled with the step under
// way (the warm-up before it, the tail after the last), and none of a
// fixed size's.
func TestWriteRampEvents(t *testing.T) {
	start := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	steps := make([]policy.RampStep, 3)
	const limit, gain, idle = "limit", "gain", "idle"
	ev := func(at time.Duration, from, to int, r string) pool.Event {
		return pool.Event{At: start.Add(at), From: from, To: to, Reason: r, MeanInFlight: 6.5, Throughput: 5000, With: 4500, Without: 4000,
			Backoff: 5 * time.Second}
	}
	byRun := [][]policy.Ramp{
		{{Policy: "pool:2", Steps: steps, Start: start}},
		{
			{Policy: "rpclab", Adaptive: true, Steps: steps, Start: start, Events: []pool.Event{
				ev(-2*time.Second, 1, 2, limit),
				ev(9*time.Second, 2, 2, gain),
			}},
			{Policy: "rpclab", Adaptive: true, Steps: steps, Start: start, Events: []pool.Event{
				ev(31*time.Second, 2, 1, idle),
			}},
		},
	}
	path := filepath.Join(t.TempDir(), "events.tsv")
	if err := writeRampEvents(path, byRun, 8*time.Second); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want a header and 3 events:\n%s", len(lines), b)
	}
	for i, want := range []string{
		"rpclab\t1\twarm-up\t-2.0\t1\t2\tgrow\t" + limit + "\t6.5\t",
		"rpclab\t1\t2\t9.0\t2\t2\thold\t" + gain + "\t6.5\t",
		"rpclab\t2\ttail\t31.0\t2\t1\tshrink\t",
	} {
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("line %d: got %q, want it to start %q", i+1, lines[i+1], want)
		}
	}
	if !strings.HasSuffix(lines[2], "\t5000\t4500\t4000\t5") {
		t.Errorf("got %q, want the throughput, then the trial's throughputs with and without its connection, then the back-off", lines[2])
	}
}
