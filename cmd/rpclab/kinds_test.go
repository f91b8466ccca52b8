// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeMixed writes a results file of every kind rpclab writes.
func writeMixed(t *testing.T, dir string) string {
	t.Helper()
	var b []byte
	for _, f := range []string{fixturePath("healthy.jsonl"), "../../docs/img/bulk-results.jsonl", "../../internal/result/testdata/flow.jsonl"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, data...)
	}
	p := filepath.Join(dir, "mixed.jsonl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestValidateAndReportEveryKind: a file that mixes ping, bulk and flow
// records validates, and reports with one section per kind.
func TestValidateAndReportEveryKind(t *testing.T) {
	dir := t.TempDir()
	mixed := writeMixed(t, dir)
	code, out, stderr := runInProcess("validate", mixed)
	if want := mixed + ": 79 records ok (12 ping, 64 bulk, 3 flow)"; code != exitOK || !strings.Contains(out, want) {
		t.Errorf("validate: exit %d, %q %q; want 0 and %q", code, out, stderr, want)
	}
	page, pngs := filepath.Join(dir, "r.html"), filepath.Join(dir, "img")
	code, out, stderr = runInProcess("report", mixed, "-o", page, "--png", pngs)
	if code != exitOK {
		t.Fatalf("report: exit %d, %q %q", code, out, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="runs">`, `<section class="kind" id="bulk">`, `<section class="kind" id="flow">`} {
		if n := strings.Count(string(b), want); n != 1 {
			t.Errorf("the page holds %q %d times, want once", want, n)
		}
	}
	for _, want := range []string{"bulk-throughput-1.png", "flow-rtt64ms-1MB.png", "go-unary-0b-closed-rpclab-go-server-throughput.png"} {
		if _, err := os.Stat(filepath.Join(pngs, want)); err != nil {
			t.Errorf("chart %s: %v", want, err)
		}
		if line := "chart written to " + filepath.Join(pngs, want); !strings.Contains(out, line) {
			t.Errorf("stdout %q lacks %q", out, line)
		}
	}
	// The bulk records committed with docs/bulk.md alone: once refused.
	if code, out, stderr := runInProcess("report", "../../docs/img/bulk-results.jsonl", "-o", page, "--force"); code != exitOK {
		t.Errorf("report of bulk records: exit %d, %q %q", code, out, stderr)
	}
}

// TestValidateAndReportAgreeOnBadFiles: an empty file is "no records" for
// both commands, and a bad line is an error naming the file and the line.
func TestValidateAndReportAgreeOnBadFiles(t *testing.T) {
	dir := t.TempDir()
	flow, err := os.ReadFile("../../internal/result/testdata/flow.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitAfter(string(flow), "\n")[0]
	tests := []struct {
		name, content, want string
		reportCode          int
		reportWant          string
	}{
		{"empty", "", "no records", exitFailure, "no records"},
		{"blank", "\n\n", "no records", exitFailure, "no records"},
		{"bad JSON mid-file", first + "{nope\n" + first, "line 2: not a JSON object", exitFailure, ""},
		{"unknown kind", first + strings.Replace(first, `"kind":"flow"`, `"kind":"ydb"`, 1), `line 2: unknown record kind "ydb"`, exitFailure, ""},
		{"unknown schema version", first + strings.Replace(first, `"schema_version":1`, `"schema_version":7`, 1), "line 2: schema_version 7 is not supported", exitFailure, ""},
		// report keeps the records before a truncated last line, with a warning naming it.
		{"truncated last line", first + first[:50], "line 2: result: last line is truncated", exitOK, "line 2 is truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, out, stderr := runInProcess("validate", p); code != exitFailure || !strings.Contains(stderr, p+": "+tc.want) {
				t.Errorf("validate: exit %d, %q %q; want 1 and %q", code, out, stderr, p+": "+tc.want)
			}
			want := tc.reportWant
			if want == "" {
				want = tc.want
			}
			if code, out, stderr := runInProcess("report", p, "-o", filepath.Join(dir, "r.html")); code != tc.reportCode || !strings.Contains(stderr, p+": "+want) {
				t.Errorf("report: exit %d, %q %q; want %d and %q", code, out, stderr, tc.reportCode, p+": "+want)
			}
		})
	}
}
