// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

func rec(conn string, n int, rps float64, status string) result.Record {
	return result.Record{
		SchemaVersion: result.SchemaVersion, Kind: result.KindPing, Status: status,
		Spec: result.Spec{Target: "127.0.0.1:1", RPC: "unary", LoadModel: "closed", Inflight: n,
			ConnMode: conn, ConnsRequested: 1},
		Env:           result.Env{Language: "go"},
		ThroughputRPS: rps,
	}
}

func TestBuildRatiosPerRunAndRange(t *testing.T) {
	run1 := []result.Record{rec("shared", 4, 1000, result.StatusOK), rec("per-worker", 4, 1500, result.StatusOK),
		rec("shared", 8, 2000, result.StatusOK), rec("per-worker", 8, 2000, result.StatusFailed)}
	run2 := []result.Record{rec("per-worker", 4, 1200, result.StatusOK), rec("shared", 4, 1000, result.StatusOK),
		rec("shared", 8, 1000, result.StatusOK), rec("per-worker", 8, 3000, result.StatusOK)}
	// Client CPU per RPC: per-worker 12 µs against shared's 10 in run 1; in
	// run 2 per-worker measured none at 4, and at 8 shared measured none, so
	// run 2 has no CPU ratio.
	run1[0].ClientCPUNSPerRPC, run1[1].ClientCPUNSPerRPC = 10e3, 12e3
	run2[1].ClientCPUNSPerRPC, run2[3].ClientCPUNSPerRPC = 10e3, 5e3
	tb, err := build([][]result.Record{run1, run2}, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.cells) != 2 {
		t.Fatalf("got %d cells, want 2 (per-worker at 4 and 8)", len(tb.cells))
	}
	at4, at8 := tb.cells[0], tb.cells[1]
	if at4.inflight != 4 || at4.ratio[0] != 1.5 || at4.ratio[1] != 1.2 {
		t.Errorf("in-flight 4: got %d %v, want 4 [1.5 1.2]", at4.inflight, at4.ratio)
	}
	if lo, hi, n := span(at4.ratio); lo != 1.2 || hi != 1.5 || n != 2 {
		t.Errorf("span at 4: got %v-%v over %d, want 1.2-1.5 over 2", lo, hi, n)
	}
	if at4.cpu[0] != 1.2 || at4.cpu[1] != 0 || at8.cpu[0] != 0 || at8.cpu[1] != 0 {
		t.Errorf("cpu ratios: got %v at 4 and %v at 8, want [1.2 0] and [0 0]", at4.cpu, at8.cpu)
	}
	// A failed step is left out: run 1 has no ratio at 8.
	if at8.ratio[0] != 0 || at8.ratio[1] != 3 {
		t.Errorf("in-flight 8: got %v, want [0 3]", at8.ratio)
	}
	var out bytes.Buffer
	tb.print(&out, []string{"a", "b"})
	tput, cpu, found := strings.Cut(out.String(), "client CPU per RPC / shared's")
	if !found {
		t.Fatalf("no CPU table:\n%s", out.String())
	}
	for _, want := range []string{"per-worker  4         1.50x  1.20x  1.20-1.50x", "3.00x  3.00x (one run)"} {
		if !strings.Contains(tput, want) {
			t.Errorf("throughput table lacks %q:\n%s", want, out.String())
		}
	}
	// The CPU table has the one ratio at 4 and no row at 8 (no CPU there).
	for _, want := range []string{"per-worker  4         1.20x  -      1.20x (one run)", "run 2: b"} {
		if !strings.Contains(cpu, want) {
			t.Errorf("CPU table lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(cpu, "per-worker  8") {
		t.Errorf("CPU table has a row at 8, where no step measured CPU:\n%s", out.String())
	}
	if _, err := build([][]result.Record{run1}, "pool:4"); !errors.Is(err, errNoBase) {
		t.Errorf("missing base: got %v, want errNoBase", err)
	}
}

func TestRunReadsCommittedRecords(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"../../docs/img/demo-results.jsonl"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// The demo's records hold shared and per-worker at in-flight 4.
	if !strings.Contains(out.String(), "per-worker  4") {
		t.Errorf("no per-worker row at in-flight 4:\n%s", out.String())
	}
}

func TestRunBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage"},
		{[]string{"--nope"}, 2, "-nope"},
		{[]string{bad}, 1, "bad.jsonl"},
		{[]string{"--base", "pool:9", "../../docs/img/demo-results.jsonl"}, 1, "pool:9"},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: got exit %d %q, want %d naming %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

func TestCompareBestMedians(t *testing.T) {
	auto := func(n int, rps, cpuUS float64) result.Record {
		r := rec("pool:auto:1:8", n, rps, result.StatusOK)
		r.ClientCPUNSPerRPC = cpuUS * 1e3
		return r
	}
	fixed := func(conn string, n int, rps, cpuUS float64) result.Record {
		r := rec(conn, n, rps, result.StatusOK)
		r.ClientCPUNSPerRPC = cpuUS * 1e3
		return r
	}
	// Three repeats: pool:2's median (1100) beats shared's (1000) at 8; the
	// candidate's median is 990 (an outlier of 5000 does not move it).
	reps := [][]result.Record{
		{auto(8, 990, 10), fixed("shared", 8, 1000, 10), fixed("pool:2", 8, 1100, 11)},
		{auto(8, 5000, 9), fixed("shared", 8, 1000, 10), fixed("pool:2", 8, 900, 12)},
		{auto(8, 500, 20), fixed("shared", 8, 1000, 10), fixed("pool:2", 8, 1200, 11)},
	}
	rows, err := compareBest(reps, "pool:auto")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.rps != 990 || r.cpu != 10 || r.best != "pool:2" || r.bestRPS != 1100 || r.bestCPU != 11 || r.n != 3 {
		t.Errorf("got %+v, want pool:auto 990/10 against pool:2 1100/11 over 3", r)
	}
	var out bytes.Buffer
	printBest(&out, rows, "pool:auto", 0.9, 1.1)
	if want := "0.90          0.91   3/3      yes"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q (0.90x the throughput at 0.91x the CPU holds):\n%s", want, out.String())
	}
	out.Reset()
	printBest(&out, rows, "pool:auto", 0.95, 1.1)
	if want := "3/3      no"; !strings.Contains(out.String(), want) {
		t.Errorf("at --bar 0.95: output lacks %q:\n%s", want, out.String())
	}
	// Paired within each repeat against pool:2: 0.9, 5000/900, 500/1200.
	if want := []float64{500.0 / 1200, 990.0 / 1100, 5000.0 / 900}; !slices.Equal(r.paired, want) {
		t.Errorf("paired ratios %v, want %v", r.paired, want)
	}
	out.Reset()
	printBest(&out, rows, "pool:auto", 0.9, 1.1)
	if want := "0.90 (0.42-5.56)"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks the paired median and range %q:\n%s", want, out.String())
	}
	// A repeat without the best layout, or with its step failed, pairs nothing.
	gap := [][]result.Record{reps[0], {auto(8, 700, 10), fixed("shared", 8, 1000, 10)}, {auto(8, 700, 10), rec("pool:2", 8, 1500, result.StatusFailed)}}
	if rows, err := compareBest(gap, "pool:auto"); err != nil || len(rows[0].paired) != 1 || rows[0].paired[0] != 0.9 {
		t.Errorf("with gaps: %v, paired %v; want only the first repeat's 0.9", err, rows[0].paired)
	}
	if got := pairedText(nil); got != "-" {
		t.Errorf("no pair: %q, want -", got)
	}
	if _, err := compareBest(reps[:1], "pool:9"); !errors.Is(err, errNoBase) {
		t.Errorf("no candidate: got %v, want errNoBase", err)
	}
}

func TestHolds(t *testing.T) {
	tests := []struct {
		r, c float64
		want bool
	}{
		{0.9, 1.1, true},     // both at their edge
		{0.8999, 1.0, false}, // throughput just short
		{0.9, 1.1001, false}, // CPU per RPC just over
		{0.95, 0, false},     // CPU per RPC unknown: not shown to hold
		{1, 3, true},         // the best layout: compared with itself
		{0.9999, 1.2, false}, // just short of the best, at more CPU
		{1.2, 0, true},       // the best layout, CPU unknown
	}
	for _, tc := range tests {
		if got := holds(tc.r, tc.c, 0.9, 1.1); got != tc.want {
			t.Errorf("holds(%v, %v): got %v, want %v", tc.r, tc.c, got, tc.want)
		}
	}
}

func TestCompareEachHoldsFixedLayoutsToTheBar(t *testing.T) {
	// Medians over three repeats at 4 and 8 in flight, RPC/s at client CPU
	// µs per RPC: shared 1000 at 10 and 1000 at 10, pool:2 900 at 11 and
	// 891 at 10, pool:4 500 at 10 and 1100 at 30, pool:auto 5000 at 10 at
	// 4 (left out of every other layout's best) and 990 at 34 at 8.
	r := func(conn string, n int, rps, cpuUS float64, status string) result.Record {
		x := rec(conn, n, rps, status)
		x.ClientCPUNSPerRPC = cpuUS * 1e3
		return x
	}
	ok := result.StatusOK
	reps := [][]result.Record{
		{r("shared", 4, 1000, 10, ok), r("pool:2", 4, 900, 11, ok), r("pool:4", 4, 500, 10, ok),
			r("shared", 8, 1000, 10, ok), r("pool:2", 8, 891, 10, ok), r("pool:4", 8, 1100, 30, ok),
			r("pool:auto:1:8", 4, 5000, 10, ok), r("pool:auto:1:8", 8, 990, 34, ok)},
		{r("shared", 4, 1000, 10, ok), r("pool:2", 4, 900, 11, ok), r("pool:4", 4, 500, 10, ok),
			r("shared", 8, 1000, 10, ok), r("pool:2", 8, 891, 10, ok), r("pool:4", 8, 1100, 30, ok)},
		{r("shared", 4, 1000, 10, ok), r("pool:2", 4, 900, 11, ok), r("pool:4", 4, 500, 10, result.StatusFailed),
			r("shared", 8, 1000, 10, ok), r("pool:2", 8, 891, 10, ok), r("pool:4", 8, 1100, 30, ok)},
	}
	rows := compareEach(reps, "pool:auto")
	got, gotCPU := map[string][]float64{}, map[string][]float64{}
	for _, r := range rows {
		got[r.layout], gotCPU[r.layout] = r.ratio, r.cpu
		if !slices.Equal(r.inflight, []int{4, 8}) {
			t.Errorf("%s: in-flight counts %v, want [4 8]", r.layout, r.inflight)
		}
	}
	want := map[string][2][]float64{
		"shared":        {{1000.0 / 900, 1000.0 / 1100}, {10.0 / 11, 10.0 / 30}},
		"pool:2":        {{0.9, 891.0 / 1100}, {1.1, 10.0 / 30}},
		"pool:4":        {{0.5, 1.1}, {1, 3}},
		"pool:auto:1:8": {{5, 990.0 / 1100}, {10.0 / 10, 34.0 / 30}},
	}
	for l, w := range want {
		for j, g := range [][]float64{got[l], gotCPU[l]} {
			if len(g) != len(w[j]) {
				t.Errorf("%s: got %v, want %v", l, g, w[j])
				continue
			}
			for i := range w[j] {
				if math.Abs(g[i]-w[j][i]) > 1e-9 {
					t.Errorf("%s at %d (%s): got %.4f, want %.4f", l, []int{4, 8}[i], []string{"throughput", "cpu"}[j], g[i], w[j][i])
				}
			}
		}
	}
	held := map[string]int{}
	for _, r := range rows {
		held[r.layout] = r.held(0.9, 1.1)
	}
	// shared: the best at 4, 0.91x at a third of the CPU at 8; pool:2:
	// 0.90x at 1.10x the CPU at 4 (both edges hold), 0.81x at 8; pool:4:
	// 0.50x at 4, the best at 8 whatever its CPU; pool:auto: the best at 4,
	// 0.90x but at 1.13x the CPU at 8.
	if held["pool:2"] != 1 || held["shared"] != 2 || held["pool:4"] != 1 || held["pool:auto:1:8"] != 1 {
		t.Errorf("held at 0.9x, 1.1x CPU: got %v, want pool:2 1, shared 2, pool:4 1, pool:auto 1", held)
	}
	var out bytes.Buffer
	printEach(&out, rows, "pool:auto", 0.9, 1.1)
	for _, w := range []string{"the best of the others but pool:auto", "holds 0.90x at most 1.10x CPU",
		"0.90 (1.10)   0.81 (0.33)*  1 of 2", "0.50 (1.00)*  1.10 (3.00)   1 of 2", "5.00 (1.00)   0.90 (1.13)*  1 of 2"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}

func TestRunCPUBar(t *testing.T) {
	for _, bar := range []string{"0.99", "-1", "NaN", "+Inf", "x"} {
		var out, errb bytes.Buffer
		if code := run([]string{"--best", "pool:auto", "--cpu-bar", bar, "../../docs/img/demo-results.jsonl"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "cpu-bar") {
			t.Errorf("--cpu-bar %s: got exit %d %q, want 2 naming --cpu-bar", bar, code, errb.String())
		}
	}
}

func TestRunBar(t *testing.T) {
	for _, bar := range []string{"0", "1.5", "NaN", "x"} {
		var out, errb bytes.Buffer
		if code := run([]string{"--best", "pool:auto", "--bar", bar, "../../docs/img/demo-results.jsonl"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "bar") {
			t.Errorf("--bar %s: got exit %d %q, want 2 naming --bar", bar, code, errb.String())
		}
	}
}

func TestQuietLeavesOutBusySteps(t *testing.T) {
	// One CPU each, 1 s: the client used 0.5 s of its CPU's 0.5 s busy, and
	// the hypervisor stole steal of it.
	busy := func(conn string, steal int64) result.Record {
		r := rec(conn, 8, 1000, result.StatusOK)
		r.Spec.Target = "server.test:50051" // not loopback: the client's CPUs are judged alone
		r.ClientCPUNS = 500e6
		r.HostCPU = &result.HostCPU{Client: result.CPUTimes{CPUs: []int{0}, BusyNS: 500e6, IdleNS: 500e6 - steal, StealNS: steal}}
		return r
	}
	recs := []result.Record{busy("shared", 100e6), busy("pool:2", 101e6), rec("pool:4", 8, 1000, result.StatusOK)}
	kept, n := quiet(recs, 0.1)
	if n != 1 || len(kept) != 2 || kept[0].Spec.ConnMode != "shared" || kept[1].Spec.ConnMode != "pool:4" {
		t.Errorf("at 0.1: got %d left out, kept %v; want pool:2 (10.1%% stolen) left out, shared (10%%) and pool:4 (no host_cpu) kept", n, kept)
	}
	if kept, n := quiet(recs, 1); n != 0 || len(kept) != 3 {
		t.Errorf("at 1: got %d left out, want none", n)
	}
	for _, bad := range []string{"-0.1", "1.1", "NaN"} {
		var out, errb bytes.Buffer
		if code := run([]string{"--max-other", bad, "../../docs/img/demo-results.jsonl"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "max-other") {
			t.Errorf("--max-other %s: got exit %d %q, want 2 naming the flag", bad, code, errb.String())
		}
	}
}

func TestHostCheck(t *testing.T) {
	// pool:auto at 8 in flight beside pool:8, medians over three repeats:
	// both on 8 connections, the candidate at 0.53x the throughput; the
	// server spent srv µs per RPC in the candidate's windows against 20.
	r := func(conn string, rps, cpuUS, srvUS float64, conns int) result.Record {
		x := rec(conn, 8, rps, result.StatusOK)
		x.ClientCPUNSPerRPC, x.ConnsObserved = cpuUS*1e3, conns
		if srvUS > 0 {
			x.ServerCPU = &result.ServerCPU{CPUNSPerRPC: srvUS * 1e3}
		}
		return x
	}
	check := func(rps, srv float64, conns, bestConns int) (bestRow, string) {
		reps := [][]result.Record{
			{r("pool:auto:1:8", rps, 40, srv, conns), r("pool:8", 1000, 22, 20, bestConns), r("shared", 500, 20, 19, 1)},
			{r("pool:auto:1:8", rps, 41, srv, conns), r("pool:8", 1010, 23, 20, bestConns), r("shared", 510, 20, 19, 1)},
			{r("pool:auto:1:8", rps, 39, srv, conns), r("pool:8", 990, 22, 20, bestConns), r("shared", 490, 20, 19, 1)},
		}
		rows, err := compareBest(reps, "pool:auto")
		if err != nil || len(rows) != 1 {
			t.Fatalf("compareBest: %v, %d rows", err, len(rows))
		}
		return rows[0], hostCheck(rows[0], 0.9, 1.1)
	}
	row, got := check(530, 22.1, 8, 8)
	if row.conns != 8 || row.bestConns != 8 || row.srv != 22.1 || row.bestSrv != 20 || row.best != "pool:8" {
		t.Errorf("got conns %v/%v, server µs/rpc %v/%v against %s; want 8/8, 22.1/20 against pool:8", row.conns, row.bestConns, row.srv, row.bestSrv, row.best)
	}
	if got == "" {
		t.Errorf("same size, the server at 1.105x its CPU per RPC: not marked")
	}
	for _, tc := range []struct {
		name        string
		rps, srv    float64
		conns, best int
	}{
		{"server at 1.10x (the edge)", 530, 22, 8, 8},
		{"another size", 530, 40, 4, 8},
		{"held the bar", 1000, 40, 8, 8},
		{"server CPU not measured", 530, 0, 8, 8},
		{"no connections seen on either side", 530, 40, 0, 0},
	} {
		if _, got := check(tc.rps, tc.srv, tc.conns, tc.best); got != "" {
			t.Errorf("%s: marked %q, want no mark", tc.name, got)
		}
	}
	// A miss on CPU alone, at the best layout's throughput, is marked too.
	reps := [][]result.Record{{r("pool:auto:1:8", 950, 40, 30, 8), r("pool:8", 1000, 22, 20, 8)}}
	rows, _ := compareBest(reps, "pool:auto")
	if got := hostCheck(rows[0], 0.9, 1.1); got == "" {
		t.Errorf("0.95x at 1.8x the client CPU, the server at 1.5x: not marked")
	}
	var out bytes.Buffer
	printBest(&out, rows, "pool:auto", 0.9, 1.1)
	for _, w := range []string{"conns  server cpu x", "8/8    1.50 (same size, slower host)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}
