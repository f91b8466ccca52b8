// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/result"
)

func importData(name string) string { return filepath.Join("..", "..", "imports", "testdata", name) }

// TestImport: the three formats become one file of valid records, each
// with its source; report draws the imported records over a local run.
func TestImport(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "imported.jsonl")
	code, stdout, stderr := runInProcess("import", "--source", "test run", "--conn", "local-pool",
		importData("ydb-output.txt"), importData("ghz.json"), importData("benchmain.txt"), "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"ydb-output.txt: 2 records (ydb-csv)", "ghz.json: 1 records (ghz-json)", "benchmain.txt: 2 records (benchmain)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout %q lacks %q", stdout, want)
		}
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("got %d records, want 5", len(recs))
	}
	for _, r := range recs {
		if r.Source != "test run" {
			t.Errorf("record of %s: source %q, want %q", r.Spec.Target, r.Source, "test run")
		}
	}
	if recs[1].Spec.ConnMode != "local-pool" || recs[1].Spec.ConnsRequested != 2 {
		t.Errorf("YDB CSV with --conn local-pool: got %+v", recs[1].Spec)
	}

	// The default source names the format and the file.
	out2 := filepath.Join(dir, "default.jsonl")
	if code, _, stderr := runInProcess("import", importData("ghz.json"), "-o", out2); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if recs, err := result.ReadFile(out2); err != nil || len(recs) != 1 || recs[0].Source != "ghz-json: ghz.json" {
		t.Errorf("got %+v, %v; want one record with source %q", recs, err, "ghz-json: ghz.json")
	}

	html := filepath.Join(dir, "overlay.html")
	if code, _, stderr := runInProcess("report", out, fixturePath("shared-only.jsonl"), "-o", html); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	// YDB's rows overlay the local cpp run (imported records match a local
	// group whatever their target); ghz's go row matches none and keeps
	// its own group.
	for _, want := range []string{"against rpclab cpp server, with imported records overlaid", "against 127.0.0.1:50051"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks the group %q", want)
		}
	}
}

// TestImportBadInput: a bad file is a usage error naming the file and the
// line (or the formats known), and nothing is written, not even the good
// files' records.
func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const h = "inflight,throughput,p50,p90,p99,p99_9,p100\n"
	short := write("short.csv", h+"1,100,1,2,3,4,5\n2,200,1,2\n")
	header := write("header.csv", "inflight,rps\n1,100\n")
	unknown := write("notes.txt", "hello\n")
	existing := write("existing.jsonl", "keep me\n")
	out := filepath.Join(dir, "out.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"short row", []string{importData("ghz.json"), short}, []string{"short.csv", "line 3: want 7 fields"}},
		{"wrong header", []string{header}, []string{"header.csv", "line 1: want YDB's CSV header"}},
		{"unknown file", []string{unknown}, []string{"notes.txt", "not a format rpclab import knows", "ydb-csv", "ghz-json", "benchmain"}},
		{"format forced wrong", []string{"--format", "ghz-json", importData("ydb-output.txt")}, []string{"ghz JSON"}},
		{"unknown --format", []string{"--format", "csv", short}, []string{`--format "csv"`}},
		{"bad --rpc", []string{"--rpc", "bidi", short}, []string{`--rpc "bidi"`}},
		{"bad --conn", []string{"--conn", "pool", short}, []string{`--conn "pool"`}},
		{"missing file", []string{filepath.Join(dir, "nope.csv")}, []string{"nope.csv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(append([]string{"import", "-o", out}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was written (%v)", out, err)
			}
		})
	}
	if code, _, stderr := runInProcess("import", importData("ghz.json")); code != exitUsage || !strings.Contains(stderr, "--out: required") {
		t.Errorf("no --out: exit %d, %q", code, stderr)
	}
	code, _, stderr := runInProcess("import", importData("ghz.json"), "-o", existing)
	if b, _ := os.ReadFile(existing); code != exitUsage || !strings.Contains(stderr, "--out") || string(b) != "keep me\n" {
		t.Errorf("existing --out: exit %d, %q, file %q", code, stderr, b)
	}
	if code, _, stderr := runInProcess("import", importData("ghz.json"), "-o", existing, "--force"); code != exitOK {
		t.Errorf("--force: exit %d, %s", code, stderr)
	}
}
