// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package proto holds the .proto files every language generates from, and
// the test that the committed Go code is generated from them.
package proto

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsFresh regenerates the Go code into a temporary folder
// and compares it with the committed files.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		if os.Getenv("RPCLAB_REQUIRE_PROTOC") == "1" {
			t.Fatal("protoc not found (apt-get install protobuf-compiler)")
		}
		t.Skip("protoc not found; set RPCLAB_REQUIRE_PROTOC=1 to make this an error")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "../scripts/genproto.sh", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("genproto.sh: %v\n%s", err, b)
	}
	for _, pkg := range []string{"benchpb", "bulkpb", "usagepb", "ydbpb", "workerpb"} {
		files, _ := filepath.Glob(filepath.Join(out, "proto", pkg, "*.go"))
		if len(files) == 0 {
			t.Fatalf("nothing generated for %s", pkg)
		}
		for _, f := range files {
			want, _ := os.ReadFile(f)
			got, err := os.ReadFile(filepath.Join(pkg, filepath.Base(f)))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("proto/%s/%s is stale or missing: run scripts/genproto.sh", pkg, filepath.Base(f))
			}
		}
	}
}
