// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsCheckedBeforeTheServer: out-of-range numbers, NaN quantiles,
// a --call that names no method, oversized or endless input files and
// duplicate list entries are each a usage error (exit 2) naming the flag
// (and the duplicate, or the limit), found before rpclab starts its child
// server.
func TestFlagsCheckedBeforeTheServer(t *testing.T) {
	fast := []string{"--warmup", "0s", "--interval", "100ms"}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"pool beyond its maximum", []string{"sweep", "--conn", "pool:99999999999"}, []string{"--conn", "pool:99999999999", "1024"}},
		{"adaptive pool of min 0", []string{"sweep", "--conn", "pool:auto:0:4"}, []string{"--conn", "pool:auto:0:4", "MIN must be at least 1"}},
		{"adaptive pool max below min", []string{"sweep", "--conn", "pool:auto:4:2"}, []string{"--conn", "pool:auto:4:2", "MAX must be at least MIN"}},
		{"adaptive pool without bounds", []string{"sweep", "--conn", "pool:auto:x"}, []string{"--conn", "pool:auto:x"}},
		{"adaptive pool twice", []string{"sweep", "--conn", "pool:auto,pool:auto:1:8"}, []string{"--conn", "twice"}},
		{"negative adaptive pool warm-up", []string{"sweep", "--conn", "pool:auto", "--auto-warmup", "-1s"}, []string{"--auto-warmup", "negative"}},
		{"adaptive pool for another language", []string{"sweep", "--client", "java", "--conn", "pool:auto"}, []string{"--conn", "pool:auto"}},
		{"call naming no method", []string{"sweep", "--rps", "10", "--call", "bogus"}, []string{"--call", "bogus", "package.Service/Method"}},
		{"data file that never ends", []string{"sweep", "--rps", "10", "--call", "a.B/C", "--data-file", "/dev/zero"}, []string{"--data-file", "16 MiB"}},
		{"protoset that never ends", []string{"sweep", "--rps", "10", "--call", "a.B/C", "--protoset", "/dev/zero"}, []string{"--protoset", "64 MiB"}},
		{"proto that never ends", []string{"sweep", "--rps", "10", "--call", "a.B/C", "--proto", "/dev/zero"}, []string{"--proto", "8 MiB"}},
		{"cacert that never ends", []string{"sweep", "--rps", "10", "--call", "a.B/C", "--tls", "--cacert", "/dev/zero"}, []string{"--cacert", "4 MiB"}},
		{"method not in the protoset", []string{"sweep", "--rps", "10", "--call", "grpc.testing.BenchmarkService/Nope", "--proto", "../../proto/grpc/testing/benchmark_service.proto", "--import-path", "../../proto"}, []string{"Nope"}},
		{"NaN quantile", []string{"sweep", "--rps", "10", "--slo", "pNaN=1ms"}, []string{"--slo", "pNaN"}},
		{"absurd rate", []string{"sweep", "--rps", "1e300"}, []string{"--rps", "1e+300"}},
		{"zero link rate", []string{"sweep", "--rate", "0bit"}, []string{"--rate", "0bit"}},
		{"duplicate in-flight", []string{"sweep", "--inflight", "1,4,1"}, []string{"--inflight", "1 is given twice"}},
		{"duplicate layout", []string{"sweep", "--conn", "pool:4,shared,pool:4:round-robin"}, []string{"--conn", "pool:4:round-robin", "twice"}},
		{"duplicate rpc", []string{"sweep", "--rpc", "unary,unary"}, []string{"--rpc", "unary is given twice"}},
		{"duplicate rate", []string{"sweep", "--rps", "100,100"}, []string{"--rps", "100 is given twice"}},
		{"duplicate client", []string{"compare", "--clients", "go,go", "-o", "", "--report", ""}, []string{"--clients", "go is given twice"}},
		{"duplicate bulk transport", []string{"bulk", "--transport", "tcp,tcp", "--size", "1MiB"}, []string{"--transport", "tcp is given twice"}},
		{"duplicate bulk size", []string{"bulk", "--transport", "tcp", "--size", "1MiB,1048576"}, []string{"--size", "twice"}},
		{"duplicate flow rtt", []string{"flow", "--payload", "1KB", "--rtt", "0,0s"}, []string{"--rtt", "0s is given twice"}},
		{"duplicate flow payload", []string{"flow", "--payload", "1KB,1000", "--rtt", "0"}, []string{"--payload", "twice"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] == "sweep" || args[0] == "compare" {
				args = append(args, fast...)
			}
			code, _, stderr := runInProcess(args...)
			if code != exitUsage {
				t.Errorf("got exit %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("got %q, want it to name %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "started server") {
				t.Errorf("the server started before the flags were checked: %s", stderr)
			}
		})
	}
}

// TestImportEndlessFile: import reads each file within its limit: an
// endless one (/dev/zero) is exit 2 naming the file and the limit, and
// nothing is written.
func TestImportEndlessFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	code, _, stderr := runInProcess("import", "-o", out, "/dev/zero")
	if code != exitUsage || !strings.Contains(stderr, "/dev/zero") || !strings.Contains(stderr, "256 MiB") {
		t.Errorf("got exit %d, %q; want %d naming /dev/zero and 256 MiB", code, stderr, exitUsage)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written (%v)", out, err)
	}
}
