// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/report"

	"github.com/rpclab/rpclab/internal/testutil"
)

func fixturePath(name string) string {
	return filepath.Join("..", "..", "internal", "report", "testdata", name)
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "r.html")
	pngs := filepath.Join(dir, "img")
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  []string
		stderr  []string
		files   []string
		noFiles []string
	}{
		{name: "html", args: []string{"report", fixturePath("shared-bottleneck.jsonl"), "-o", html, "--force"},
			stdout: []string{"report written to " + html}, files: []string{html}},
		{name: "png only", args: []string{"report", fixturePath("healthy.jsonl"), "--png", pngs},
			stdout: []string{"chart written to " + filepath.Join(pngs, "go-unary-0b-closed-rpclab-go-server-throughput.png")},
			files:  []string{filepath.Join(pngs, "go-unary-0b-closed-rpclab-go-server-latency.png")}, noFiles: []string{"report.html"}},
		{name: "overlay", args: []string{"report", fixturePath("shared-bottleneck.jsonl"), fixturePath("healthy.jsonl"), "-o", html, "--force"},
			stdout: []string{"report written to"}},
		{name: "truncated last line", args: []string{"report", fixturePath("truncated.jsonl"), "-o", html, "--force"},
			stdout: []string{"report written to"}, stderr: []string{"rpclab: warning: ", "line 4 is truncated", "kept the 3 records before it"}},
		{name: "mixed targets", args: []string{"report", fixturePath("mixed-targets.jsonl"), "-o", html, "--force"},
			stderr: []string{"records of 2 targets"}},
		{name: "empty file", args: []string{"report", fixturePath("empty.jsonl"), "-o", html, "--force"}, code: exitFailure,
			stderr: []string{"empty.jsonl: no records (the file is empty or blank)"}},
		{name: "unknown schema version", args: []string{"report", fixturePath("unknown-version.jsonl"), "-o", html, "--force"}, code: exitFailure,
			stderr: []string{"line 2: schema_version 99 is not supported (this rpclab reads 1)"}},
		{name: "missing file", args: []string{"report", filepath.Join(dir, "nope.jsonl")}, code: exitFailure,
			stderr: []string{"no such file or directory"}},
		{name: "no file", args: []string{"report"}, code: exitUsage},
		{name: "nothing to write", args: []string{"report", fixturePath("healthy.jsonl"), "-o", ""}, code: exitUsage,
			stderr: []string{"give -o FILE.html, --png DIR, or both"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wd := t.TempDir()
			code, stdout, stderr := runInDir(t, wd, tc.args...)
			if code != tc.code {
				t.Fatalf("got exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout %q lacks %q", stdout, want)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
			for _, f := range tc.files {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("got %v, want %s written", err, f)
				}
			}
			for _, f := range tc.noFiles {
				if _, err := os.Stat(filepath.Join(wd, f)); err == nil {
					t.Errorf("%s written, want none", f)
				}
			}
		})
	}
}

// runInDir runs rpclab in-process with relative paths made absolute first,
// and the working directory set to wd for files the command names itself.
func runInDir(t *testing.T, wd string, args ...string) (int, string, string) {
	t.Helper()
	abs := make([]string, len(args))
	for i, a := range args {
		abs[i] = a
		if strings.HasPrefix(a, "..") {
			p, err := filepath.Abs(a)
			if err != nil {
				t.Fatal(err)
			}
			abs[i] = p
		}
	}
	t.Chdir(wd)
	return runInProcess(abs...)
}

// TestDemoWritesReport runs the demo with short steps and checks it ends
// with rpclab-report.html, holding the four charts, and names its path;
// --limit-scene=false leaves the second scene out.
func TestDemoWritesReport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	dir := t.TempDir()
	cmd := rpclabCmd(ctx, "demo", "--inflight", "1,2", "--warmup", "100ms", "--interval", "300ms", "--limit-scene=false")
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v; stderr:\n%s", err, e.String())
	}
	page := filepath.Join(dir, "rpclab-report.html")
	if want := "report with charts written to " + page; !strings.Contains(e.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, e.String())
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), `<figure class="chart"`); got != 4 {
		t.Errorf("got %d charts in the demo's report, want 4", got)
	}
	// --limit-scene=false: the second scene neither ran nor wrote.
	for _, f := range []string{"rpclab-results-limit.jsonl", "rpclab-report-limit.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written with --limit-scene=false", f)
		}
	}
	if strings.Contains(o.String(), "Scene 2") {
		t.Errorf("stdout has the second scene with --limit-scene=false:\n%s", o.String())
	}
}

// TestReportOverlaysPublished: YDB's published curve and a local run of
// YDB's client mode make one group of charts, with the speed-up chart,
// and no warning that nothing overlays.
func TestReportOverlaysPublished(t *testing.T) {
	pngs := filepath.Join(t.TempDir(), "img")
	code, stdout, stderr := runInDir(t, t.TempDir(), "report", "../../docs/published/ydb-2025-single-connection.jsonl",
		"../../experiments/ydb/2026-11-23/ydb-local-1-21.jsonl", "--png", pngs)
	if code != exitOK {
		t.Fatalf("got exit %d, want %d; stderr: %s", code, exitOK, stderr)
	}
	if stderr != "" {
		t.Errorf("got stderr %q, want none", stderr)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if p, ok := strings.CutPrefix(l, "chart written to "); ok {
			got = append(got, filepath.Base(p))
		}
	}
	var want []string
	for _, k := range report.OverlayFigureKinds {
		want = append(want, "cpp-unary-0b-closed-127-0-0-1-2138-"+k+".png")
	}
	if !slices.Equal(got, want) {
		t.Errorf("got charts %q, want %q (one group: the local run's, the published curve on it)", got, want)
	}
}
