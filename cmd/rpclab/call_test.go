// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallFlagsAreShared: doctor and sweep take --call and the flags
// around it from one list (callFlags), so both say the same of each.
func TestCallFlagsAreShared(t *testing.T) {
	doctor, sweep := newDoctorCmd().Flags(), newSweepCmd().Flags()
	for _, name := range []string{"call", "data", "data-file", "protoset", "proto", "import-path", "tls", "cacert", "insecure-skip-verify", "authority", "header"} {
		d, s := doctor.Lookup(name), sweep.Lookup(name)
		if d == nil || s == nil {
			t.Errorf("--%s: doctor has it %v, sweep %v; want both", name, d != nil, s != nil)
			continue
		}
		if name == "call" {
			continue // each says what the call replaces
		}
		if d.Usage != s.Usage || d.DefValue != s.DefValue {
			t.Errorf("--%s: doctor says %q (default %q), sweep %q (default %q); want the same", name, d.Usage, d.DefValue, s.Usage, s.DefValue)
		}
	}
}

// TestProtoMissingImportSuggestsImportPath: a --proto whose import is not
// found under the import paths is a usage error that points at
// --import-path and says where it looked.
func TestProtoMissingImportSuggestsImportPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "svc.proto")
	src := "syntax = \"proto3\";\npackage kv;\nimport \"kv/types.proto\";\nservice KV { rpc Range(types.R) returns (types.R); }\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runInProcess("doctor", "--target", "127.0.0.1:1", "--call", "kv.KV/Range", "--proto", file)
	if want := "with --import-path (searched: " + dir + ")"; code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("got exit %d, %q; want exit %d and %q", code, stderr, exitUsage, want)
	}
}
