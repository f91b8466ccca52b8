// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/bench/peers"
)

// TestRampBadFlags: each bad `peers ramp` flag is a usage error (exit 2)
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
		{"no server", []string{"--rpclab", ""}, "--rpclab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"ramp", "--rpclab", self}, tc.args...)
			var stdout, stderr bytes.Buffer
			if code := run(args, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("got exit %d, %q; want exit 2 naming %s", code, stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("got output %q before the flags were checked", stdout.String())
			}
		})
	}
}

// TestPrintRampsRatio: each step's P99 is set over the least P99 of the
// fixed sizes at that step, and the summary says when an adaptive pool
// was back at its min.
func TestPrintRampsRatio(t *testing.T) {
	step := func(p99 time.Duration, conns int) peers.RampStep {
		return peers.RampStep{Offered: 1000, Achieved: 1000, P99: p99, Conns: conns, MaxConns: conns}
	}
	ramps := []peers.Ramp{
		{Policy: "pool:1", Steps: []peers.RampStep{step(200*time.Microsecond, 1)}},
		{Policy: "pool:2", Steps: []peers.RampStep{step(100*time.Microsecond, 2)}},
		{Policy: "rpclab", Steps: []peers.RampStep{step(110*time.Microsecond, 2)}, Adaptive: true, Min: 1, BackAtMin: true, BackToMin: 1500 * time.Millisecond},
		{Policy: "a105", Steps: []peers.RampStep{step(300*time.Microsecond, 1)}, Adaptive: true, Min: 1},
		{Policy: "yarpc", Steps: []peers.RampStep{step(300*time.Microsecond, 1)}, Adaptive: true, Min: 1, BackAtMin: true},
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

// hasRow reports whether a line of out names run and holds field.
func hasRow(out, run, field string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(" "+l+" ", " "+run+" ") && strings.Contains(l, field) {
			return true
		}
	}
	return false
}
