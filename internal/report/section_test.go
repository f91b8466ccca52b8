// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// mixedFile writes a results file of every kind: ping records, then bulk
// records, then flow records, then more ping records.
func mixedFile(t *testing.T) string {
	t.Helper()
	var b []byte
	for _, f := range []string{"testdata/healthy.jsonl", "testdata/bulk.jsonl", "testdata/flow.jsonl"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, data...)
	}
	p := filepath.Join(t.TempDir(), "mixed.jsonl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHTMLSectionPerKind: a file that mixes kinds reports each kind in its
// own section, the bulk and flow ones with the tables rpclab bulk and
// rpclab flow print.
func TestHTMLSectionPerKind(t *testing.T) {
	res, _, err := Load(t.Context(), []string{mixedFile(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || len(res.Bulk) != 64 || len(res.Flow) != 3 {
		t.Fatalf("got %d runs, %d bulk, %d flow records; want 1, 64, 3", len(res.Runs), len(res.Bulk), len(res.Flow))
	}
	var page bytes.Buffer
	if err := HTML(&page, res, nil); err != nil {
		t.Fatal(err)
	}
	var bulkTable, flowTable bytes.Buffer
	if err := BulkTable(&bulkTable, res.Bulk); err != nil {
		t.Fatal(err)
	}
	if err := FlowTable(&flowTable, res.Flow); err != nil {
		t.Fatal(err)
	}
	got := page.String()
	for _, want := range []string{`<section id="runs">`, `<section id="verdict">`, `<section class="kind" id="bulk">`, `<section class="kind" id="flow">`,
		html.EscapeString(bulkTable.String()), html.EscapeString(flowTable.String()), `id="bulk-throughput-1"`, `id="flow-flow-1"`} {
		if n := strings.Count(got, want); n != 1 {
			t.Errorf("the page holds %q %d times, want once", want[:min(len(want), 60)], n)
		}
	}
	// One kind alone: its section only, no ping sections.
	bulkOnly := &Results{Names: []string{"bulk-results.jsonl"}, Bulk: res.Bulk}
	page.Reset()
	if err := HTML(&page, bulkOnly, nil); err != nil {
		t.Fatal(err)
	}
	if got := page.String(); strings.Contains(got, `id="runs"`) || !strings.Contains(got, `id="bulk"`) || strings.Contains(got, `id="flow"`) ||
		!strings.Contains(got, "<title>rpclab report: bulk-results.jsonl</title>") {
		t.Errorf("a bulk-only report: want the bulk section alone, titled by the file")
	}
}

// TestLoadNotesClampedLatencies: a record whose latencies went past the
// histogram's range (latency_clamped) is named in the warnings, which the
// command prints and the page shows.
func TestLoadNotesClampedLatencies(t *testing.T) {
	data, err := os.ReadFile("testdata/healthy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[1] = strings.Replace(lines[1], `"histogram_hdr"`, `"latency_clamped":3,"histogram_hdr"`, 1)
	p := filepath.Join(t.TempDir(), "clamped.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	res, warnings, err := Load(t.Context(), []string{p})
	if err != nil {
		t.Fatal(err)
	}
	want := p + ": 1 record(s) have 3 RPC(s) slower than the histogram's range (1m40s), counted as 1m40s (latency_clamped)"
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], want) {
		t.Fatalf("got warnings %q, want one starting %q", warnings, want)
	}
	var page bytes.Buffer
	if err := HTML(&page, res, warnings); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), html.EscapeString(want)) {
		t.Errorf("the page does not show the note %q", want)
	}
	// Without the field, no note.
	if _, warnings, _ := Load(t.Context(), []string{"testdata/healthy.jsonl"}); len(warnings) != 0 {
		t.Errorf("got warnings %q for records without latency_clamped, want none", warnings)
	}
}

// TestWritePNGsEverySection: WritePNGs writes the charts of every section,
// each under its chart's name: the ping groups', bulk's numbered by figure
// kind, flow's by RTT and payload.
func TestWritePNGsEverySection(t *testing.T) {
	res, _, err := Load(t.Context(), []string{mixedFile(t)})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var want []string
	for _, s := range res.Sections() {
		kinds = append(kinds, s.Kind())
		for _, c := range s.Charts() {
			want = append(want, c.Name+".png")
		}
	}
	if !slices.Equal(kinds, []string{result.KindPing, result.KindBulk, result.KindFlow}) {
		t.Fatalf("got sections %v, want ping, bulk, flow", kinds)
	}
	dir := t.TempDir()
	paths, err := WritePNGs(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paths {
		got = append(got, filepath.Base(p))
		if _, err := os.Stat(p); err != nil {
			t.Errorf("WritePNGs returned %s: %v", p, err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("got files %v, want %v", got, want)
	}
	for _, name := range []string{"go-unary-0b-closed-rpclab-go-server-throughput.png", "bulk-throughput-1.png", "bulk-cpu-1.png", "flow-rtt64ms-1MB.png"} {
		if !slices.Contains(got, name) {
			t.Errorf("got files %v, want %s among them", got, name)
		}
	}
}
