// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/verdict"
)

// loadRuns is the ping runs Load reads from paths.
func loadRuns(paths []string) ([]Run, []string, error) {
	res, warnings, err := Load(context.Background(), paths)
	if err != nil {
		return nil, nil, err
	}
	return res.Runs, warnings, nil
}

func fixture(t *testing.T, names ...string) []Run {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join("testdata", n))
	}
	runs, warnings, err := loadRuns(paths)
	if err != nil {
		t.Fatalf("Load(%v): %v", names, err)
	}
	if len(warnings) > 0 {
		t.Fatalf("Load(%v) warned %q, want no warning", names, warnings)
	}
	return runs
}

func TestLoadBadInput(t *testing.T) {
	tests := []struct {
		file     string
		wantErr  string
		sentinel error
		records  int
		warning  string
	}{
		{file: "empty.jsonl", wantErr: "report: testdata/empty.jsonl: no records (the file is empty or blank)", sentinel: ErrEmpty},
		{file: "unknown-version.jsonl", wantErr: "line 2: schema_version 99 is not supported (this rpclab reads 1)"},
		{file: "missing.jsonl", wantErr: "no such file or directory"},
		{file: "truncated.jsonl", records: 3, warning: "testdata/truncated.jsonl: line 4 is truncated (a writer stopped mid-line); skipped it and kept the 3 records before it"},
		{file: "mixed-targets.jsonl", records: 6, warning: "testdata/mixed-targets.jsonl: records of 2 targets (10.0.0.5:50051, 10.0.0.6:50051); each target gets its own charts"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			runs, warnings, err := loadRuns([]string{filepath.Join("testdata", tc.file)})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
					t.Errorf("got %v, want it to wrap %v", err, tc.sentinel)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if got := len(runs[0].Records); got != tc.records {
				t.Errorf("got %d records, want %d", got, tc.records)
			}
			if len(warnings) != 1 || warnings[0] != tc.warning {
				t.Errorf("got warnings %q, want [%q]", warnings, tc.warning)
			}
		})
	}
	one := filepath.Join(t.TempDir(), "one-truncated.jsonl")
	if err := os.WriteFile(one, []byte(`{"schema_version":1,"kind":"pi`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadRuns([]string{one}); err == nil || !strings.Contains(err.Error(), "no records (its only record is truncated)") {
		t.Errorf("got %v, want an error saying its only record is truncated", err)
	}
	if _, _, err := loadRuns(nil); err == nil {
		t.Error("Load(nil): got no error, want one")
	}
}

func TestMixedTargetsGetTheirOwnGroups(t *testing.T) {
	runs, _, err := loadRuns([]string{"testdata/mixed-targets.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	gs := Groups(runs)
	if len(gs) != 2 {
		t.Fatalf("got %d groups, want 2", len(gs))
	}
	for _, g := range gs {
		if len(g.Rows) != 3 {
			t.Errorf("group %q: got %d rows, want 3", g.Title, len(g.Rows))
		}
	}
}

// Two sweeps appended to one file, at 0 and 5 ms RTT (the README's
// records), become two runs that overlay: each layout's line and verdict
// come from one network, never a mix of both.
func TestMixedNetworksBecomeRuns(t *testing.T) {
	runs, warnings, err := loadRuns([]string{"../../docs/img/rtt0-rtt5-results.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	want := "../../docs/img/rtt0-rtt5-results.jsonl: records of 2 emulated networks (no netem; RTT 5ms); each is a run of its own"
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("got warnings %q, want [%q]", warnings, want)
	}
	if len(runs) != 2 || runs[0].Name != "rtt0-rtt5-results.jsonl (no netem)" || runs[1].Name != "rtt0-rtt5-results.jsonl (RTT 5ms)" {
		t.Fatalf("got %d runs %v, want the no-netem and the RTT 5ms run", len(runs), runNamesOf(runs))
	}
	for _, run := range runs {
		if len(run.Records) != 6 {
			t.Errorf("%s: got %d records, want 6", run.Name, len(run.Records))
		}
		for _, r := range run.Records {
			if (r.Spec.Netem != nil) != strings.Contains(run.Name, "RTT") {
				t.Errorf("%s holds a record with netem %+v", run.Name, r.Spec.Netem)
			}
		}
	}
	if !shareGroup(runs) {
		t.Error("the two networks' runs share no group, so they would not overlay")
	}
	if v := verdict.Verdicts(runs[1].Records); len(v) != 1 || v[0].Kind != verdict.Scales {
		t.Errorf("at 5 ms RTT got verdicts %+v, want one that says shared still scales", v)
	}
}

func runNamesOf(runs []Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Name)
	}
	return out
}

func TestNetemLabel(t *testing.T) {
	ms := int64(1e6)
	tests := []struct {
		n    *result.NetemSpec
		want string
	}{
		{nil, "no netem"},
		{&result.NetemSpec{Up: result.NetemLink{DelayNS: 25 * ms / 10}, Down: result.NetemLink{DelayNS: 25 * ms / 10}}, "RTT 5ms"},
		{&result.NetemSpec{Up: result.NetemLink{DelayNS: ms, JitterNS: ms / 10, RateBps: 1e9}, Down: result.NetemLink{DelayNS: ms, JitterNS: ms / 10, RateBps: 1e9}},
			"RTT 2ms, jitter ±100µs each way, 1gbit each way"},
		{&result.NetemSpec{Up: result.NetemLink{DelayNS: ms, RateBps: 1e8}, Down: result.NetemLink{DelayNS: 3 * ms}}, "up 1ms 100mbit, down 3ms"},
	}
	for _, tc := range tests {
		if got := NetemLabel(tc.n); got != tc.want {
			t.Errorf("NetemLabel(%+v) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// page is what the tests read back from a report.
type page struct {
	doc *html.Node
}

func render(t *testing.T, runs []Run, notes []string) (*page, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, &Results{Runs: runs}, notes); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("parse the report: %v", err)
	}
	return &page{doc}, b.Bytes()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, c string) bool {
	for _, f := range strings.Fields(attr(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

// find returns the element nodes under n for which ok is true.
func find(n *html.Node, ok func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && ok(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func tag(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == name }
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// svgDoc is what the tests read from a chart: parseSVG renders the svg
// element back to markup and parses it as XML, as an SVG viewer would.
type svgDoc struct {
	texts []string
	// lines are the vertex counts of the stroked data lines (2 pt wide).
	lines []int
}

var vertexRE = regexp.MustCompile(`[ML]`)

func parseSVG(t *testing.T, n *html.Node) svgDoc {
	t.Helper()
	var b bytes.Buffer
	if err := html.Render(&b, n); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	var out svgDoc
	inText := false
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("the chart's SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			inText = e.Name.Local == "text"
			if e.Name.Local != "path" {
				continue
			}
			var dAttr, style string
			for _, a := range e.Attr {
				switch a.Name.Local {
				case "d":
					dAttr = a.Value
				case "style":
					style = a.Value
				}
			}
			if strings.Contains(style, "fill:none") && strings.Contains(style, "stroke-width:2") {
				out.lines = append(out.lines, len(vertexRE.FindAllString(dAttr, -1)))
			}
		case xml.CharData:
			if inText {
				out.texts = append(out.texts, string(e))
			}
		case xml.EndElement:
			inText = false
		}
	}
}

type wantFigure struct {
	kind   string
	series []string
	points int
}

func checkFigures(t *testing.T, p *page, runs []Run, want map[string][]wantFigure) {
	t.Helper()
	checkCharts(t, p, want, func(wf wantFigure, sd svgDoc) {
		// Each series is one stroked line in the SVG, plus its legend
		// swatch (2 vertices); together their vertices are every point.
		if got, want := len(sd.lines), 2*len(wf.series); got != want {
			t.Errorf("%s chart: got %d stroked lines in the SVG, want %d (series and legend swatches)", wf.kind, got, want)
		}
		vertices := 0
		for _, v := range sd.lines {
			vertices += v
		}
		if want := wf.points + 2*len(wf.series); vertices != want {
			t.Errorf("%s chart: got %d line vertices in the SVG, want %d", wf.kind, vertices, want)
		}
	})
}

// checkCharts checks, group by group, each chart's kind, the legend the
// SVG writer drew, its series count and the rows of its data table (one
// per point, plus a header), then calls more (if not nil) on each chart.
func checkCharts(t *testing.T, p *page, want map[string][]wantFigure, more func(wantFigure, svgDoc)) {
	t.Helper()
	groups := find(p.doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "group") })
	if len(groups) != len(want) {
		t.Fatalf("got %d groups, want %d", len(groups), len(want))
	}
	for _, g := range groups {
		figs, ok := want[attr(g, "id")]
		if !ok {
			t.Fatalf("unexpected group %q", attr(g, "id"))
		}
		charts := find(g, func(n *html.Node) bool { return n.Data == "figure" && hasClass(n, "chart") })
		if len(charts) != len(figs) {
			t.Fatalf("group %s: got %d charts, want %d", attr(g, "id"), len(charts), len(figs))
		}
		for i, c := range charts {
			wf := figs[i]
			if got := attr(c, "data-kind"); got != wf.kind {
				t.Errorf("chart %d: got kind %q, want %q", i, got, wf.kind)
			}
			svgs := find(c, tag("svg"))
			if len(svgs) != 1 {
				t.Fatalf("%s chart: got %d svg elements, want 1", wf.kind, len(svgs))
			}
			sd := parseSVG(t, svgs[0])
			texts := "\n" + strings.Join(sd.texts, "\n") + "\n"
			for _, s := range wf.series {
				if !strings.Contains(texts, "\n"+s+"\n") {
					t.Errorf("%s chart: legend has no %q; texts: %q", wf.kind, s, sd.texts)
				}
			}
			if got, want := attr(c, "data-series"), strconv.Itoa(len(wf.series)); got != want {
				t.Errorf("%s chart: got data-series %s, want %s", wf.kind, got, want)
			}
			if got := len(find(c, tag("tr"))) - 1; got != wf.points {
				t.Errorf("%s chart: got %d data rows, want %d points", wf.kind, got, wf.points)
			}
			if more != nil {
				more(wf, sd)
			}
		}
	}
}

func seriesNames(prefix string, conns ...string) []string {
	var out []string
	for _, c := range conns {
		out = append(out, prefix+c)
	}
	return out
}

func latencyNames(prefix string, conns ...string) []string {
	var out []string
	for _, c := range conns {
		out = append(out, prefix+c+" P50", prefix+c+" P99", prefix+c+" P99.9")
	}
	return out
}

func TestHTMLFigures(t *testing.T) {
	runs := fixture(t, "shared-bottleneck.jsonl")
	p, raw := render(t, runs, nil)
	conns := []string{"shared", "per-worker", "pool:4"}
	checkFigures(t, p, runs, map[string][]wantFigure{
		"go-unary-0b-closed-rpclab-go-server": {
			{FigThroughput, append(seriesNames("", conns...), "ideal (shared at 1 × in-flight)"), 18 + 6},
			{FigLatency, latencyNames("", conns...), 54},
			{FigEfficiency, seriesNames("", conns...), 18},
			{FigCPU, seriesNames("", conns...), 18},
		},
	})

	tables := find(p.doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "records") })
	if len(tables) != 1 {
		t.Fatalf("got %d record tables, want 1", len(tables))
	}
	if got := len(find(tables[0], tag("tr"))) - 1; got != len(runs[0].Records) {
		t.Errorf("got %d record rows, want %d", got, len(runs[0].Records))
	}
	verdicts := find(p.doc, func(n *html.Node) bool { return hasClass(n, "verdict") })
	if len(verdicts) != 1 || attr(verdicts[0], "data-kind") != string(verdict.ConnBottleneck) {
		t.Fatalf("got %d verdicts, want one %s", len(verdicts), verdict.ConnBottleneck)
	}
	if got, want := text(verdicts[0]), verdict.Verdicts(runs[0].Records)[0].Text; got != want {
		t.Errorf("got verdict %q, want %q", got, want)
	}
	checkSelfContained(t, p, raw)
}

func TestHTMLOverlay(t *testing.T) {
	runs := fixture(t, "shared-bottleneck.jsonl", "healthy.jsonl")
	p, raw := render(t, runs, nil)
	b, a := "shared-bottleneck.jsonl: ", "healthy.jsonl: "
	checkFigures(t, p, runs, map[string][]wantFigure{
		"go-unary-0b-closed-rpclab-go-server": {
			{FigThroughput, append(append(seriesNames(b, "shared", "per-worker", "pool:4"), seriesNames(a, "shared", "per-worker")...),
				b+"ideal (shared at 1 × in-flight)", a+"ideal (shared at 1 × in-flight)"), 30 + 12},
			{FigLatency, append(latencyNames(b, "shared", "per-worker", "pool:4"), latencyNames(a, "shared", "per-worker")...), 90},
			{FigEfficiency, append(seriesNames(b, "shared", "per-worker", "pool:4"), seriesNames(a, "shared", "per-worker")...), 30},
			{FigCPU, append(seriesNames(b, "shared", "per-worker", "pool:4"), seriesNames(a, "shared", "per-worker")...), 30},
		},
	})
	cmp := find(p.doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "compare") })
	if len(cmp) != 1 {
		t.Fatalf("got %d comparison tables, want 1", len(cmp))
	}
	rows := find(cmp[0], tag("tr"))
	if got, want := len(rows)-1, 12; got != want { // shared and per-worker at 6 in-flight counts
		t.Errorf("got %d comparison rows, want %d", got, want)
	}
	// shared at in-flight 32: 16800 -> 148000 req/s.
	found := false
	for _, r := range rows {
		if strings.HasPrefix(text(r), "shared3216800148000") {
			found = strings.Contains(text(r), "8.81x")
		}
	}
	if !found {
		t.Error("no comparison row for shared at in-flight 32 with ratio 8.81x")
	}
	kinds := map[string]string{}
	for _, v := range find(p.doc, func(n *html.Node) bool { return hasClass(n, "verdict") }) {
		kinds[attr(v, "data-run")] = attr(v, "data-kind")
	}
	if kinds["shared-bottleneck.jsonl"] != string(verdict.ConnBottleneck) || kinds["healthy.jsonl"] != string(verdict.Scales) {
		t.Errorf("got verdicts %v, want the bottleneck before and scaling after", kinds)
	}
	checkSelfContained(t, p, raw)
}

// checkSelfContained: nothing in the page makes the browser fetch anything.
func checkSelfContained(t *testing.T, p *page, raw []byte) {
	t.Helper()
	for _, n := range find(p.doc, func(*html.Node) bool { return true }) {
		if n.Data == "script" || n.Data == "iframe" || n.Data == "img" || n.Data == "object" {
			t.Errorf("page has a <%s>, want none", n.Data)
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "src", "href", "xlink:href", "srcset":
				if !strings.HasPrefix(a.Val, "data:") && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q> refers outside the page", n.Data, a.Key, a.Val)
				}
			}
		}
	}
	if bytes.Contains(raw, []byte("@import")) || bytes.Contains(raw, []byte("url(")) {
		t.Error("the page's CSS loads something")
	}
}

func TestHTMLNotesAndEscaping(t *testing.T) {
	runs := fixture(t, "healthy.jsonl")
	runs[0].Name = `<run & "one">`
	runs = append(runs, Run{Name: "second", Records: runs[0].Records})
	p, _ := render(t, runs, []string{"a <note>"})
	notes := find(p.doc, func(n *html.Node) bool { return hasClass(n, "notes") })
	if len(notes) != 1 || text(notes[0]) != "a <note>" {
		t.Errorf("got notes %q, want \"a <note>\"", text(notes[0]))
	}
	for _, svg := range find(p.doc, tag("svg")) {
		sd := parseSVG(t, svg)
		if !strings.Contains(strings.Join(sd.texts, "\n"), `<run & "one">: shared`) {
			t.Errorf("legend lost the run name: %q", sd.texts)
		}
	}
}

func TestHTMLNoRecords(t *testing.T) {
	if err := HTML(&bytes.Buffer{}, &Results{}, nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("got %v, want ErrEmpty", err)
	}
}

func TestFailedStepsAreTabledNotCharted(t *testing.T) {
	runs := fixture(t, "healthy.jsonl")
	recs := runs[0].Records
	recs[5].Status, recs[5].Error, recs[5].ThroughputRPS = result.StatusFailed, "target unreachable", 0
	gs := Groups(runs)
	if got := len(gs[0].Rows); got != 12 {
		t.Errorf("got %d rows, want 12", got)
	}
	thr := gs[0].Figures[0]
	if got := len(thr.Series[0].Points); got != 5 {
		t.Errorf("shared: got %d points, want 5 (the failed step left out)", got)
	}
}

func TestWritePNGs(t *testing.T) {
	runs := fixture(t, "server-bound.jsonl")
	dir := filepath.Join(t.TempDir(), "img")
	paths, err := WritePNGs(dir, &Results{Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(FigureKinds) {
		t.Fatalf("got %d files, want %d", len(paths), len(FigureKinds))
	}
	for i, p := range paths {
		if want := "go-unary-0b-closed-rpclab-go-server-" + FigureKinds[i] + ".png"; filepath.Base(p) != want {
			t.Errorf("got %s, want %s", filepath.Base(p), want)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got, want := img.Bounds().Dx(), 1500; got != want {
			t.Errorf("%s: got width %d, want %d (ChartWidth at PNGDPI)", p, got, want)
		}
	}
}

// TestHTMLDegenerateRuns: groups without anything to chart still render.
func TestHTMLDegenerateRuns(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *result.Record)
		drop   func(r *result.Record) bool
		series map[string]int
	}{
		{name: "every step failed", mutate: func(r *result.Record) {
			r.Status, r.Error, r.ThroughputRPS, r.Latency = result.StatusFailed, "target unreachable", 0, stats.Latency{}
		}, series: map[string]int{FigThroughput: 0, FigLatency: 0, FigEfficiency: 0, FigCPU: 0}},
		{name: "no in-flight 1 step", drop: func(r *result.Record) bool { return r.Spec.Inflight == 1 },
			series: map[string]int{FigThroughput: 2, FigLatency: 6, FigEfficiency: 0, FigCPU: 2}},
		{name: "one step", drop: func(r *result.Record) bool { return r.Spec.Inflight != 1 || r.Spec.ConnMode != "shared" },
			series: map[string]int{FigThroughput: 2, FigLatency: 3, FigEfficiency: 1, FigCPU: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs := fixture(t, "healthy.jsonl")
			var recs []result.Record
			for _, r := range runs[0].Records {
				if tc.drop != nil && tc.drop(&r) {
					continue
				}
				if tc.mutate != nil {
					tc.mutate(&r)
				}
				recs = append(recs, r)
			}
			runs[0].Records = recs
			p, _ := render(t, runs, nil)
			charts := find(p.doc, func(n *html.Node) bool { return n.Data == "figure" && hasClass(n, "chart") })
			if len(charts) != len(FigureKinds) {
				t.Fatalf("got %d charts, want %d", len(charts), len(FigureKinds))
			}
			for _, c := range charts {
				if got, want := attr(c, "data-series"), strconv.Itoa(tc.series[attr(c, "data-kind")]); got != want {
					t.Errorf("%s chart: got %s series, want %s", attr(c, "data-kind"), got, want)
				}
			}
		})
	}
}

// An open-loop sweep is charted against the offered rate, with the schedule
// lag in place of efficiency, gets no throughput verdict, and its records
// table shows rate and lag.
func TestOpenLoopGroups(t *testing.T) {
	runs := fixture(t, "open-loop.jsonl")
	if vs := verdict.Verdicts(runs[0].Records); len(vs) != 0 {
		t.Errorf("got %d verdicts for an open loop, want none: %+v", len(vs), vs)
	}
	gs := Groups(runs)
	if len(gs) != 1 || !gs[0].Open {
		t.Fatalf("got %d groups (open %v), want one open-loop group", len(gs), len(gs) > 0 && gs[0].Open)
	}
	g := gs[0]
	var kinds []string
	for _, f := range g.Figures {
		kinds = append(kinds, f.Kind)
	}
	if !slices.Equal(kinds, OpenFigureKinds) {
		t.Fatalf("got figures %v, want %v", kinds, OpenFigureKinds)
	}
	rates := []float64{2000, 5000, 10000, 20000}
	xs := func(s Series) []float64 {
		var out []float64
		for _, p := range s.Points {
			out = append(out, p.X)
		}
		return out
	}
	thr := g.Figures[0]
	if thr.XLabel != "offered rate (req/s)" || len(thr.Series) != 3 {
		t.Fatalf("throughput figure: x %q, %d series; want the offered rate and shared, per-worker, offered rate", thr.XLabel, len(thr.Series))
	}
	for _, s := range thr.Series {
		if !slices.Equal(xs(s), rates) {
			t.Errorf("throughput series %q at x %v, want %v", s.Label, xs(s), rates)
		}
	}
	if s := thr.Series[2]; s.Label != "offered rate" || s.Points[3].Y != 20000 {
		t.Errorf("got ideal series %q %v, want the offered rate line y = x", s.Label, s.Points)
	}
	if shared := thr.Series[0]; shared.Label != "shared" || shared.Points[3].Y != 16000 {
		t.Errorf("got series %q %v, want shared falling to 16000 at 20000 offered", shared.Label, shared.Points)
	}
	lag := g.Figures[2]
	if len(lag.Series) != 4 || !lag.LogY {
		t.Fatalf("lag figure: %d series (log %v), want P50 and P99 of two layouts on a log axis", len(lag.Series), lag.LogY)
	}
	if s := lag.Series[1]; s.Label != "shared lag P99" || s.Points[3].Y != 9000 {
		t.Errorf("got %q %v, want shared's lag P99 of 9000 µs at the top rate", s.Label, s.Points)
	}

	p, _ := render(t, runs, nil)
	tables := find(p.doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "records") })
	if len(tables) != 1 {
		t.Fatalf("got %d records tables, want 1", len(tables))
	}
	rows := find(tables[0], tag("tr"))
	if len(rows) != 1+len(runs[0].Records) {
		t.Fatalf("records table has %d rows, want a header and %d", len(rows), len(runs[0].Records))
	}
	head := text(rows[0])
	for _, col := range []string{"offered rate (req/s)", "lag P99", "bound hits", "peak in flight"} {
		if !strings.Contains(head, col) {
			t.Errorf("records header %q lacks %q", head, col)
		}
	}
	if got := text(rows[4]); !strings.Contains(got, "20000") || !strings.Contains(got, "16000") || !strings.Contains(got, "9000.0") {
		t.Errorf("shared's 20000 rps row %q lacks its rate, throughput and lag P99", got)
	}
	verdicts := find(p.doc, func(n *html.Node) bool { return hasClass(n, "verdict") })
	if len(verdicts) != 1 || !strings.Contains(text(verdicts[0]), "No verdict for open-loop steps") {
		t.Errorf("got verdict paragraphs %d, want one saying open loops get no verdict", len(verdicts))
	}
}
