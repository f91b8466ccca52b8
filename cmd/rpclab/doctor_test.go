// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
)

// TestDoctorClientBadFlags: rpclab doctor --client refuses, naming the
// flag (exit 2), an unknown client, every option another stack's client
// cannot honour (the step spec carries the ping, a closed loop and no dial
// settings; the adaptive pool is Go's only) and a clients folder that is
// not there; a client that does not build is a clear failure (exit 1),
// reached only once every option passed.
func TestDoctorClientBadFlags(t *testing.T) {
	dir := t.TempDir()
	// A clients folder whose Python client does not build.
	broken := filepath.Join(dir, "clients")
	if err := os.MkdirAll(filepath.Join(broken, "python"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "python", "build.sh"), []byte("echo cannot build >&2; exit 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doctor := func(args ...string) []string {
		return append([]string{"doctor", "--target", "127.0.0.1:1", "--clients-dir", broken}, args...)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown client", doctor("--client", "cobol"), exitUsage, "--client: unknown client \"cobol\""},
		{"call", doctor("--client", "python", "--call", "grpc.testing.BenchmarkService/UnaryCall"), exitUsage, "--call: not with --client python: the python client calls the ping only"},
		{"data", doctor("--client", "python", "--data", "{}"), exitUsage, "--data: not with --client python"},
		{"data file", doctor("--client", "python", "--data-file", "x.json"), exitUsage, "--data-file: not with --client python"},
		{"proto", doctor("--client", "python", "--proto", "x.proto"), exitUsage, "--proto: not with --client python"},
		{"tls", doctor("--client", "python", "--tls"), exitUsage, "--tls: not with --client python: the python client dials in plaintext"},
		{"cacert", doctor("--client", "python", "--cacert", "ca.pem"), exitUsage, "--cacert: not with --client python"},
		{"authority", doctor("--client", "python", "--authority", "a.example"), exitUsage, "--authority: not with --client python"},
		{"header", doctor("--client", "python", "--header", "k=v"), exitUsage, "--header: not with --client python: the python client sends no metadata"},
		{"rate cap", doctor("--client", "python", "--max-rps", "100"), exitUsage, "--max-rps: not with --client python: the python client runs a closed loop only"},
		{"adaptive asked for", doctor("--client", "python", "--adaptive"), exitUsage, "--adaptive: not with --client python: the python client has no adaptive pool"},
		{"no clients folder", []string{"doctor", "--target", "127.0.0.1:1", "--client", "python", "--clients-dir", filepath.Join(dir, "none")}, exitUsage, "--clients-dir: " + filepath.Join(dir, "none") + " is not a folder"},
		{"no such client in the folder", doctor("--client", "java"), exitUsage, "--client: "},
		{"bad pools, before the build", doctor("--client", "python", "--pools", "1"), exitUsage, "--pools"},
		// What the Python client can honour passes the checks and reaches
		// the build, which fails.
		{"does not build", doctor("--client", "python", "--adaptive=false", "--max-rps", "0"), exitFailure, "build the python client"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d and a message with %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// verdictAfter is the verdict text that follows head in out: its lines up
// to the first line that is not the verdict's (doctor's code change or
// notes, or the next file's verdict).
func verdictAfter(out, head string) string {
	i := strings.Index(out, head)
	if i < 0 {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(out[i+len(head):], "\n") {
		if l == "" || strings.HasPrefix(l, "The change") || strings.HasPrefix(l, "Note:") || strings.HasPrefix(l, "Verdict on ") || strings.HasPrefix(l, "report written") {
			break
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// TestDoctorThenReportSameVerdict: rpclab doctor against an in-process
// server whose connections each carry at most 500 RPCs/s (a 2 ms think
// time, one stream per connection: a connection limit with a known
// answer), then rpclab report on doctor's records: both print the same
// verdict, word for word, and it is a connection bottleneck that advises
// the pool of 4.
func TestDoctorThenReportSameVerdict(t *testing.T) {
	addr := testutil.Serve(t, server.New(server.Options{Delay: 2 * time.Millisecond, MaxConcurrentStreams: 1}))
	dir := t.TempDir()
	recs := filepath.Join(dir, "doctor.jsonl")
	code, stdout, stderr := runInProcess("doctor", "--target", addr, "--pools", "4", "--adaptive=false",
		"--budget", "20s", "--max-inflight", "4", "--out", recs)
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, stderr)
	}
	doc := verdictAfter(stdout, "Verdict:\n")
	code, rout, rerr := runInProcess("report", recs, "-o", filepath.Join(dir, "report.html"))
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, rerr)
	}
	rep := verdictAfter(rout, "Verdict on doctor.jsonl:\n")
	if doc == "" || doc != rep {
		t.Fatalf("doctor's verdict and report's differ:\ndoctor: %q\nreport: %q", doc, rep)
	}
	if strings.HasPrefix(doc, "Other processes took") {
		t.Skipf("the host was busy, so the rules' reading is not checked: %s", doc)
	}
	if want := "Client-side connection bottleneck: use 4 connections (pool:4"; !strings.Contains(doc, want) {
		t.Errorf("got verdict %q, want it to contain %q", doc, want)
	}
}

// TestDoctorOutFull: a records file that cannot be written (/dev/full)
// ends the study at its first step with a non-zero exit naming --out.
func TestDoctorOutFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	addr := testutil.Serve(t, server.New(server.Options{}))
	code, stdout, stderr := runInProcess("doctor", "--target", addr, "--pools", "2", "--adaptive=false",
		"--budget", "8s", "--max-inflight", "2", "--out", "/dev/full", "--force")
	if code != exitFailure || !strings.Contains(stderr, "--out /dev/full") || strings.Contains(stdout, "Verdict") {
		t.Errorf("got exit %d, stdout %q, stderr %q; want exit %d naming --out and no verdict", code, stdout, stderr, exitFailure)
	}
	if n := strings.Count(stderr, "rpclab doctor: shared "); n != 1 {
		t.Errorf("got %d steps printed, want the study to end at its first (stderr %q)", n, stderr)
	}
}
