// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepWorkersOutputsAsLocal: a sweep on workers checks its outputs
// by the session's one rule, before any worker is dialled: an existing
// non-empty -o, an -o hard-linked to --csv, and a --csv hard-linked to a
// records file (even with --force) are refused with exit 2 and the very
// error a sweep on this machine gives, and the files are left as they
// were.
func TestSweepWorkersOutputsAsLocal(t *testing.T) {
	const records = `{"schema_version":1}` + "\n"
	for _, tc := range []struct {
		name  string
		files map[string]string // name: content ("" an empty file)
		links map[string]string // new name: existing name
		args  []string          // {dir} is the folder
		want  string
	}{
		{"non-empty out", map[string]string{"r.jsonl": "earlier\n"}, nil, []string{"-o", "{dir}/r.jsonl"}, "--out"},
		{"out hard-linked to csv", map[string]string{"t.csv": ""}, map[string]string{"r.jsonl": "t.csv"}, []string{"-o", "{dir}/r.jsonl", "--csv", "{dir}/t.csv"}, "--csv"},
		{"csv hard-linked to records", map[string]string{"old.jsonl": records}, map[string]string{"t.csv": "old.jsonl"}, []string{"-o", "{dir}/new.jsonl", "--csv", "{dir}/t.csv", "--force"}, "--csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]string
			for i, mode := range [][]string{nil, {"--workers", "127.0.0.1:1"}} {
				dir := t.TempDir()
				for name, content := range tc.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				for link, to := range tc.links {
					if err := os.Link(filepath.Join(dir, to), filepath.Join(dir, link)); err != nil {
						t.Skipf("no hard links here: %v", err)
					}
				}
				args := append([]string{"sweep", "--target", "127.0.0.1:1"}, mode...)
				for _, a := range tc.args {
					args = append(args, strings.ReplaceAll(a, "{dir}", dir))
				}
				code, _, stderr := runInProcess(args...)
				if code != exitUsage || !strings.Contains(stderr, tc.want) {
					t.Errorf("%v: got exit %d and %q, want exit %d naming %s", mode, code, stderr, exitUsage, tc.want)
				}
				got[i] = strings.ReplaceAll(stderr, dir, "{dir}")
				for name, content := range tc.files {
					if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != content {
						t.Errorf("%v: %s now holds %q (%v), want %q as it was", mode, name, b, err, content)
					}
				}
			}
			if got[1] != got[0] {
				t.Errorf("on workers got %q, want the local sweep's %q", got[1], got[0])
			}
		})
	}
}

// TestSweepWorkersRefusesLocalGroups: with --workers, a flag of a group
// only a sweep from this machine reads (the child server, the client,
// netem, the open loop's dispatcher and --call) or a service the workers
// do not call is refused with exit 2 naming it, before any worker is
// dialled.
func TestSweepWorkersRefusesLocalGroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"server", []string{"--server", "cpp"}, "--server is not supported with --workers"},
		{"server flag", []string{"--server-flag=--x"}, "--server-flag is not supported with --workers"},
		{"no pin", []string{"--no-pin"}, "--no-pin is not supported with --workers"},
		{"client", []string{"--client", "java"}, "--client is not supported with --workers"},
		{"netem", []string{"--rate", "1gbit"}, "--rate is not supported with --workers"},
		{"slo", []string{"--rps", "100", "--slo", "p99=1ms"}, "--slo is not supported with --workers"},
		{"call", []string{"--call", "a.B/C"}, "--call is not supported with --workers"},
		{"service", []string{"--service", "ydb-debug"}, "--service ydb-debug is not supported with --workers"},
		{"arrival without rps", []string{"--arrival", "poisson"}, "--arrival needs --rps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"sweep", "--workers", "127.0.0.1:1", "--target", "127.0.0.1:1"}, tc.args...)
			code, _, stderr := runInProcess(args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d saying %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}
