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
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestOutputsAreCheckedBeforeTheWork: an output that is an input or
// another output, a records file that exists, or an output that cannot be
// written is refused with exit 2 naming the flag, before anything is
// measured (no server started, at once), and no file is touched.
func TestOutputsAreCheckedBeforeTheWork(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.jsonl")
	const oldText = "{\"kind\":\"ping\"}\n"
	if err := os.WriteFile(old, []byte(oldText), 0o644); err != nil {
		t.Fatal(err)
	}
	same := filepath.Join(dir, "same.out")
	fast := []string{"--warmup", "0s", "--interval", "100ms", "--inflight", "1"}
	// Records, an earlier CSV and a request file, which no output may
	// replace; a symlink to the records.
	rec := filepath.Join(dir, "rec.jsonl")
	oldCSV := filepath.Join(dir, "old.csv")
	data := filepath.Join(dir, "data.json")
	// The demo's second scene writes beside -o, named with "-limit".
	prevLimit := filepath.Join(dir, "prev-limit.jsonl")
	kept := map[string]string{rec: `{"schema_version":1,"kind":"ping"}` + "\n", oldCSV: "a,b\n", data: "{}", prevLimit: oldText}
	for p, text := range kept {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recLink := filepath.Join(dir, "rec-link.csv")
	if err := os.Symlink(rec, recLink); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.jsonl")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"report over its input", []string{"report", old, "-o", old}, []string{"-o " + old, "the same file"}},
		{"sweep records and CSV in one file", append([]string{"sweep", "-o", same, "--csv", same}, fast...), []string{"--csv " + same, "--out"}},
		{"sweep over earlier records", append([]string{"sweep", "-o", old}, fast...), []string{"--out " + old, "--force"}},
		{"demo over earlier records", append([]string{"demo", "-o", old}, fast...), []string{"--out " + old, "--force"}},
		{"demo over its second scene's earlier records", append([]string{"demo", "-o", filepath.Join(dir, "prev.jsonl")}, fast...), []string{"--out " + prevLimit, "--force"}},
		{"compare report in a missing folder", append([]string{"compare", "--clients", "go", "-o", "", "--report", "/nonexistent/x.html"}, fast...), []string{"--report /nonexistent/x.html"}},
		{"compare PNGs where no folder can be", append([]string{"compare", "--clients", "go", "-o", "", "--png", "/proc/rpclab-nonexist"}, fast...), []string{"--png /proc/rpclab-nonexist"}},
		{"bulk charts where no folder can be", []string{"bulk", "--size", "1MiB", "--charts", "/proc/rpclab-nonexist"}, []string{"--charts /proc/rpclab-nonexist"}},
		{"bulk over earlier records", []string{"bulk", "--size", "1MiB", "--out", old}, []string{"--out " + old, "--force"}},
		{"flow charts where no folder can be", []string{"flow", "--payload", "1KB", "--rtt", "0", "--charts", "/proc/rpclab-nonexist"}, []string{"--charts /proc/rpclab-nonexist"}},
		{"flow over earlier records", []string{"flow", "--payload", "1KB", "--rtt", "0", "-o", old}, []string{"--out " + old, "--force"}},
		{"sweep CSV over an earlier CSV", append([]string{"sweep", "-o", fresh, "--csv", oldCSV}, fast...), []string{"--csv " + oldCSV, "--force"}},
		{"sweep CSV over records, forced", append([]string{"sweep", "-o", fresh, "--csv", rec, "--force"}, fast...), []string{"--csv " + rec, "records file"}},
		{"sweep CSV over records through a symlink, forced", append([]string{"sweep", "-o", fresh, "--csv", recLink, "--force"}, fast...), []string{"--csv " + recLink, "records file"}},
		{"sweep CSV over its --data-file", append([]string{"sweep", "--rps", "10", "--call", "a.B/C", "--data-file", data, "--csv", data, "--force"}, fast...), []string{"--csv " + data, "the same file"}},
		{"workers: CSV is the records through ./", []string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:2", "-o", same, "--csv", dir + "/./same.out"}, []string{"--csv " + dir + "/./same.out", "the same file"}},
		{"workers: CSV over records, forced", []string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:2", "-o", fresh, "--csv", rec, "--force"}, []string{"--csv " + rec, "records file"}},
		{"report over records, forced", []string{"report", old, "-o", rec, "--force"}, []string{"-o " + rec, "records file"}},
		{"report over an earlier file", []string{"report", old, "-o", oldCSV}, []string{"-o " + oldCSV, "--force"}},
		{"netem selftest JSON over records, forced", []string{"netem", "selftest", "--json", rec, "--force"}, []string{"--json " + rec, "records file"}},
		{"netem selftest JSON over an earlier file", []string{"netem", "selftest", "--json", oldCSV}, []string{"--json " + oldCSV, "--force"}},
		{"compare report over records, forced", append([]string{"compare", "--clients", "go", "-o", "", "--report", rec, "--force"}, fast...), []string{"--report " + rec, "records file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage {
				t.Errorf("got exit %d (%q), want %d", code, stderr, exitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("got %q, want it to name %s", stderr, w)
				}
			}
			if strings.Contains(stderr, "started server") || time.Since(start) > 2*time.Second {
				t.Errorf("measured before refusing (%v): %s", time.Since(start), stderr)
			}
			if b, _ := os.ReadFile(old); string(b) != oldText {
				t.Errorf("%s now holds %q", old, b)
			}
			for _, p := range []string{same, fresh} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was created", p)
				}
			}
			for p, text := range kept {
				if b, _ := os.ReadFile(p); string(b) != text {
					t.Errorf("%s now holds %q", p, b)
				}
			}
		})
	}
}

// TestForceOverwritesRecords: with --force an earlier records file is
// replaced by the new records.
func TestForceOverwritesRecords(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runInProcess("sweep", "--target", testutil.ClosedAddr(t), "--inflight", "1", "--conn", "shared",
		"--warmup", "0s", "--interval", "100ms", "--dial-timeout", "200ms", "-o", out, "--force")
	if code != exitFailure { // the target is unreachable: one failed record
		t.Fatalf("got exit %d (%s), want %d", code, stderr, exitFailure)
	}
	b, err := os.ReadFile(out)
	if err != nil || bytes.Contains(b, []byte("old")) || !bytes.Contains(b, []byte(`"status":"failed"`)) {
		t.Errorf("got %q (%v), want the new failed record only", b, err)
	}
}

// TestCSVKeptWhenTheRunFails: a run that fails before its first record
// (here: no client could be built) leaves an earlier --csv as it was,
// even forced: the CSV is written whole at the end, never emptied first.
func TestCSVKeptWhenTheRunFails(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "old.csv")
	if err := os.WriteFile(csv, []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runInProcess("sweep", "--client", "java", "--clients-dir", filepath.Join(dir, "none"), "--conn", "shared",
		"--inflight", "1", "--warmup", "0s", "--interval", "100ms", "--csv", csv, "--force")
	if code == exitOK {
		t.Fatalf("got exit %d (%s), want a failure", code, stderr)
	}
	if b, _ := os.ReadFile(csv); string(b) != "a,b\n" {
		t.Errorf("got %q in the CSV, want the earlier %q", b, "a,b\n")
	}
}

// TestDemoReportInAReadOnlyPlace: demo's fixed report path is checked with
// the records, before the sweep (the working directory is /proc, where
// nothing can be created, even by root).
func TestDemoReportInAReadOnlyPlace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	cmd := rpclabCmd(ctx, "demo", "-o", filepath.Join(t.TempDir(), "r.jsonl"), "--inflight", "1", "--interval", "100ms")
	cmd.Dir = "/proc"
	b, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(b), "--report rpclab-report.html") ||
		strings.Contains(string(b), "started server") {
		t.Errorf("got %v: %s; want exit %d naming --report before any server starts", err, b, exitUsage)
	}
}

func TestCPUsOutOfRangeIsAUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--cpus", "99"},
		{"netem", "--upstream", "127.0.0.1:1", "--cpus", "0,99"},
	} {
		// A child with a deadline: a server that accepts the flag serves on.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := rpclabCmd(ctx, args...)
		b, _ := cmd.CombinedOutput()
		cancel()
		if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(b), "--cpus: CPU 99 is not online") {
			t.Errorf("%v: got exit %d, %q; want %d naming --cpus and CPU 99", args, cmd.ProcessState.ExitCode(), b, exitUsage)
		}
	}
}

// TestServeBufferRange: --write-buffer and --read-buffer out of range are
// refused with exit 2 naming the flag and the limit, before the server
// listens (a child with a deadline: a server that accepts them serves on).
func TestServeBufferRange(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"huge write buffer", []string{"--write-buffer", "99999999999"}, "--write-buffer 99999999999: want 0 (grpc-go's 32 KiB) to 16777216 bytes (16 MiB)"},
		{"negative read buffer", []string{"--read-buffer", "-1"}, "--read-buffer -1: want 0"},
		{"read buffer above the limit", []string{"--read-buffer", "16777217"}, "--read-buffer 16777217"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := rpclabCmd(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
			b, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(b), tc.want) || strings.Contains(string(b), "listening on") {
				t.Errorf("got exit %d, %q; want %d naming %q before listening", cmd.ProcessState.ExitCode(), b, exitUsage, tc.want)
			}
		})
	}
}

func TestStatusTextSaysTheStatusOnce(t *testing.T) {
	tests := []struct{ status, msg, want string }{
		{"interrupted", "interrupted: the interval was cut short", "interrupted: the interval was cut short"},
		{"failed", "target unreachable", "failed: target unreachable"},
		{"failed", "", "failed"},
		{"interrupted", "interrupted", "interrupted"},
	}
	for _, tc := range tests {
		if got := statusText(tc.status, tc.msg); got != tc.want {
			t.Errorf("statusText(%q, %q) = %q, want %q", tc.status, tc.msg, got, tc.want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"0", []int{0}},
		{"0-3", []int{0, 1, 2, 3}},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}},
	}
	for _, tc := range tests {
		got, err := parseCPUList(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := parseCPUList("0-x"); err == nil {
		t.Error("parseCPUList(\"0-x\"): no error")
	}
}
