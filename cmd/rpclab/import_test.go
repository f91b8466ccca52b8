// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

func importData(name string) string {
	return filepath.Join("..", "..", "internal", "foreign", "testdata", name)
}

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

	// Two ghz reports in one file (ghz in a loop, >> one file): both.
	ghz, err := os.ReadFile(importData("ghz.json"))
	if err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(dir, "two.json")
	if err := os.WriteFile(two, append(append(ghz, '\n'), ghz...), 0o644); err != nil {
		t.Fatal(err)
	}
	out3 := filepath.Join(dir, "two.jsonl")
	if code, stdout, stderr := runInProcess("import", two, "-o", out3); code != exitOK || !strings.Contains(stdout, "two.json: 2 records (ghz-json)") {
		t.Errorf("two ghz reports: exit %d, stdout %q, stderr %q; want 2 records", code, stdout, stderr)
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
	empty := write("empty.csv", "")
	ghz, err := os.ReadFile(importData("ghz.json"))
	if err != nil {
		t.Fatal(err)
	}
	const fh, gh, th = "rtt_ms,rpc_index,grpc_ms,http2_ms,http1_ms\n", "clients,goroutines,requests,qps\n",
		"repository,server,pack_objects_cache,egress_mb_s,system_load_per_cpu,cpu_utilization_pct\n"
	existing := write("existing.jsonl", "keep me\n")
	out := filepath.Join(dir, "out.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"short row", []string{importData("ghz.json"), short}, []string{"short.csv", "line 3, column 5: short row"}},
		{"wrong header", []string{header}, []string{"header.csv", `line 1, column 2: header column "rps", want "throughput"`}},
		{"unknown file", []string{unknown}, []string{"notes.txt", "line 1, column 1", "not a format rpclab import knows", "ydb-csv", "ghz-json", "benchmain", "gitaly-csv"}},
		{"empty file", []string{empty}, []string{"empty.csv", "line 1, column 1: the input is empty"}},
		{"empty file, format named", []string{"--format", "gitaly-csv", empty}, []string{"empty.csv", "line 1, column 1: empty"}},
		{"flow: wrong header", []string{write("f1.csv", "rtt_ms,rpc,grpc_ms\n0,1,1\n")}, []string{"f1.csv", `line 1, column 2: header column "rpc"`}},
		{"flow: short row", []string{write("f2.csv", fh+"0,1,1,1\n")}, []string{"f2.csv", "line 2, column 5: short row"}},
		{"flow: not a number", []string{write("f3.csv", fh+"0,1,x,1,1\n")}, []string{"f3.csv", `line 2, column 3: grpc_ms "x" is not a number`}},
		{"gateway: wrong header", []string{write("g1.csv", "clients,callers\n1,1\n")}, []string{"g1.csv", `line 1, column 2: header column "callers"`}},
		{"gateway: short row", []string{write("g2.csv", gh+"1,50\n")}, []string{"g2.csv", "line 2, column 3: short row"}},
		{"gateway: not a number", []string{write("g3.csv", gh+"1,50,1000,fast\n")}, []string{"g3.csv", `line 2, column 4: qps "fast" is not a number`}},
		{"gitaly: wrong header", []string{write("t1.csv", "repository,host\n")}, []string{"t1.csv", `line 1, column 2: header column "host"`}},
		{"gitaly: short row", []string{write("t2.csv", th+"r,gitaly-grpc\n")}, []string{"t2.csv", "line 2, column 3: short row"}},
		{"gitaly: not a number", []string{write("t3.csv", th+"r,gitaly-grpc,on,lots,1,1\n")}, []string{"t3.csv", `line 2, column 4: egress_mb_s "lots" is not a number`}},
		{"benchmain: NaN latency", []string{write("bm.txt", "Unary-benchTime_1s-maxConcurrentCalls_1:\n50_Latency: 1µs\t90_Latency: 2µs\t99_Latency: NaNµs\t\nNumber of requests: 5\n")},
			[]string{"bm.txt", `line 2, column 33: 99_Latency "NaNµs" is not a latency`}},
		{"ghz: more errors than requests", []string{write("ghz-bad.json", strings.Replace(string(ghz), `"Unavailable":100}`, `"Unavailable":200000}`, 1))},
			[]string{"ghz-bad.json", "ghz JSON report 1: statusCodeDistribution Unavailable is 200000 of 20000 calls"}},
		{"ghz: second of two reports bad", []string{write("ghz-two.json", string(ghz)+strings.Replace(string(ghz), `"count":20000`, `"count":-1`, 1))},
			[]string{"ghz-two.json", "ghz JSON report 2"}},
		{"format forced wrong", []string{"--format", "ghz-json", importData("ydb-output.txt")}, []string{"ghz JSON"}},
		{"unknown --format", []string{"--format", "csv", short}, []string{`--format "csv"`}},
		{"bad --rpc", []string{"--rpc", "bidi", short}, []string{`--rpc "bidi"`}},
		{"bad --conn", []string{"--conn", "pool", short}, []string{`--conn "pool"`}},
		{"missing file", []string{filepath.Join(dir, "nope.csv")}, []string{"nope.csv"}},
		{"endless file", []string{"/dev/zero"}, []string{"/dev/zero: larger than its limit of 256 MiB"}},
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

// TestImportServeHelpNamesDebugService: rpclab serve --help says it
// answers YDB's Ydb.Debug.V1.DebugService, which YDB's client and the C++
// client in YDB mode ping (and which YDB's imported tables were measured
// on).
func TestImportServeHelpNamesDebugService(t *testing.T) {
	code, stdout, stderr := runInProcess("serve", "--help")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"grpc.testing.BenchmarkService", "Ydb.Debug.V1.DebugService", "grpc_ping_client"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, stdout)
		}
	}
}
