// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// twoClients is the shared-bottleneck fixture (Go: shared, per-worker,
// pool:4 at in-flight 1..32) plus a C++ run of the same steps in which
// per-worker is C-core's channel-per-worker trap: a channel per worker, one
// connection seen.
func twoClients(t *testing.T) []result.Record {
	t.Helper()
	goRecs := fixture(t, "shared-bottleneck.jsonl")[0].Records
	recs := append([]result.Record(nil), goRecs...)
	for _, r := range goRecs {
		if r.Spec.ConnMode == "pool" {
			continue
		}
		r.Env.Language, r.Env.GRPCImpl, r.Env.GRPCVersion = "cpp", "grpc-c++", "1.51.1"
		if r.Spec.ConnMode == "per-worker" {
			r.Spec.ConnMode = "channel-per-worker"
			r.ConnsObserved = 1
			r.ThroughputRPS /= 2
		}
		recs = append(recs, r)
	}
	return recs
}

func TestClientGroups(t *testing.T) {
	recs := twoClients(t)
	gs := ClientGroups([]Run{{Name: "r", Records: recs}})
	if len(gs) != 1 {
		t.Fatalf("got %d client groups, want 1", len(gs))
	}
	g := gs[0]
	if got, want := len(g.Rows), len(recs); got != want {
		t.Errorf("got %d rows, want %d", got, want)
	}
	kinds := []string{FigClientsThroughput, FigClientsLatency, FigClientsCPU}
	if len(g.Figures) != len(kinds) {
		t.Fatalf("got %d figures, want %d", len(g.Figures), len(kinds))
	}
	wantSeries := []string{"go shared", "go per-worker", "go pool:4", "cpp shared", "cpp channel-per-worker"}
	for i, f := range g.Figures {
		if f.Kind != kinds[i] {
			t.Errorf("figure %d: got kind %q, want %q", i, f.Kind, kinds[i])
		}
		var labels []string
		points := 0
		for _, s := range f.Series {
			labels = append(labels, s.Label)
			points += len(s.Points)
		}
		if got, want := strings.Join(labels, ","), strings.Join(wantSeries, ","); got != want {
			t.Errorf("%s: got series %s, want %s", f.Kind, got, want)
		}
		if got, want := points, 5*6; got != want {
			t.Errorf("%s: got %d points, want %d", f.Kind, got, want)
		}
	}
	// One colour per language, one dash per layout.
	thr := g.Figures[0].Series
	if thr[0].Color != thr[1].Color || thr[0].Color == thr[3].Color || thr[0].Dash != thr[3].Dash || thr[0].Dash == thr[1].Dash {
		t.Errorf("styles: got %+v", thr)
	}
	// A cpp channel-per-worker point is half the Go per-worker one.
	if got, want := thr[4].Points[5].Y, thr[1].Points[5].Y/2; got != want {
		t.Errorf("cpp channel-per-worker at in-flight 32: got %v req/s, want %v", got, want)
	}

	if gs := ClientGroups(fixture(t, "shared-bottleneck.jsonl")); len(gs) != 0 {
		t.Errorf("one language: got %d client groups, want none", len(gs))
	}
}

func TestClientsInHTML(t *testing.T) {
	runs := []Run{{Name: "compare", Records: twoClients(t)}}
	p, raw := render(t, runs, nil)
	sections := find(p.doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "clients") })
	if len(sections) != 1 {
		t.Fatalf("got %d client sections, want 1", len(sections))
	}
	charts := find(sections[0], func(n *html.Node) bool { return n.Data == "figure" && hasClass(n, "chart") })
	if len(charts) != 3 {
		t.Fatalf("got %d charts in the client section, want 3", len(charts))
	}
	for _, c := range charts {
		if got := attr(c, "data-series"); got != "5" {
			t.Errorf("%s: got %s series, want 5", attr(c, "data-kind"), got)
		}
		sd := parseSVG(t, find(c, tag("svg"))[0])
		if !strings.Contains(strings.Join(sd.texts, "\n"), "cpp channel-per-worker") {
			t.Errorf("%s: legend lacks cpp channel-per-worker: %q", attr(c, "data-kind"), sd.texts)
		}
	}
	notes := find(p.doc, func(n *html.Node) bool { return n.Data == "ul" && hasClass(n, "connnotes") })
	if len(notes) != 1 || !strings.Contains(text(notes[0]), "cpp channel-per-worker at in-flight 32 asked for 32 connections and the OS saw 1") {
		t.Errorf("connection notes: got %d lists", len(notes))
	}
	// Per-language groups are still there: go and cpp.
	if got := len(find(p.doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "group") })); got != 2 {
		t.Errorf("got %d per-language groups, want 2", got)
	}
	// The run's row names both clients and both stacks.
	runs2 := find(p.doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "runs") })
	if len(runs2) != 1 || !strings.Contains(text(runs2[0]), "go, cpp") || !strings.Contains(text(runs2[0]), "grpc-go 1.85.0, grpc-c++ 1.51.1") {
		t.Errorf("runs table does not list both clients and stacks: %q", text(runs2[0]))
	}
	checkSelfContained(t, p, raw)
}

func TestClientTable(t *testing.T) {
	var b bytes.Buffer
	if err := ClientTable(&b, twoClients(t)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if got, want := len(lines), 1+5; got != want {
		t.Fatalf("got %d lines, want %d:\n%s", got, want, b.String())
	}
	head := strings.Fields(lines[0])
	// client gRPC conn rpc, then per in-flight count "req/s @N", "P99 µs @N", "cpu µs/rpc @N".
	if got, want := len(head), 4+6*(2+3+3); got != want {
		t.Errorf("got %d header words, want %d: %q", got, want, lines[0])
	}
	var cpw []string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); f[0] == "cpp" && f[3] == "channel-per-worker" {
			cpw = f
		}
	}
	if cpw == nil {
		t.Fatalf("no cpp channel-per-worker line:\n%s", b.String())
	}
	// Columns: cpp grpc-c++ 1.51.1 channel-per-worker unary, then req/s at 1..32.
	var want32 float64
	for _, r := range twoClients(t) {
		if r.Env.Language == "cpp" && r.Spec.ConnMode == "channel-per-worker" && r.Spec.Inflight == 32 {
			want32 = r.ThroughputRPS
		}
	}
	if got, want := cpw[5+5], strconv.FormatFloat(want32, 'f', 0, 64); got != want {
		t.Errorf("cpp channel-per-worker req/s at 32: got %s, want %s", got, want)
	}
}

func TestConnNotes(t *testing.T) {
	notes := verdict.ConnNotes(twoClients(t))
	if len(notes) != 1 {
		t.Fatalf("got %d notes, want 1: %q", len(notes), notes)
	}
	for _, part := range []string{"cpp channel-per-worker at in-flight 32", "asked for 32 connections and the OS saw 1", "identical arguments", "rpclab::ChannelPool, clients/cpp/pool"} {
		if !strings.Contains(notes[0], part) {
			t.Errorf("note %q lacks %q", notes[0], part)
		}
	}
	if n := verdict.ConnNotes(fixture(t, "shared-bottleneck.jsonl")[0].Records); len(n) != 0 {
		t.Errorf("every layout got its connections: got notes %q", n)
	}
}
