// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestPoliciesBadFlags: each bad `peers policies` flag is a usage error
// (exit 2) naming it, before any server starts.
func TestPoliciesBadFlags(t *testing.T) {
	self, err := os.Executable() // any executable stands for --rpclab
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown policy", []string{"--policies", "rpclab,grpc-gcp"}, "--policies"},
		{"max 0", []string{"--max", "0"}, "--max"},
		{"no interval", []string{"--interval", "0s"}, "--interval"},
		{"no repeats", []string{"--repeats", "0"}, "--repeats"},
		{"bad in-flight", []string{"--inflight", "1,x"}, "--inflight"},
		{"no server", []string{"--rpclab", ""}, "--rpclab"},
		{"bad rate", []string{"--rate", "fast"}, "--rate"},
		{"bare small rate", []string{"--rate", "2000"}, "--rate"},
		{"negative delay", []string{"--delay", "-1ms"}, "--delay"},
		{"negative payload", []string{"--payload", "-1"}, "--payload"},
		{"payload past 4 MiB", []string{"--payload", "4194305"}, "--payload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"policies", "--rpclab", self}, tc.args...)
			var stdout, stderr bytes.Buffer
			if code := run(args, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("got exit %d, %q; want exit 2 naming %s", code, stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("got output %q before the flags were checked", stdout.String())
			}
		})
	}
}
