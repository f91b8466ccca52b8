// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
