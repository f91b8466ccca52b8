// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// covered are the folders whose Go packages one entry covers: proto/ (the
// generated code), clients/ (clients/<lang>/ and the conformance tests),
// scripts/, docs/, and pool's sub-packages (pool/'s paragraph and line
// cover them).
var covered = []string{"proto", "clients/", "scripts/", "docs", "pool/adaptive", "pool/internal/"}

// TestLayoutDocsMatchTheTree: every Go package of the module has its
// paragraph in docs/architecture.md and its line in the README's Layout
// section, so a package added or moved shows up in both.
func TestLayoutDocsMatchTheTree(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list packages: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), gobin, "list", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	arch, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	var n int
	for _, p := range strings.Fields(string(out)) {
		dir := strings.TrimPrefix(p, "github.com/rpclab/rpclab/")
		if isCovered(dir) {
			continue
		}
		n++
		if !strings.Contains(string(arch), "**`"+dir+"/`**") {
			t.Errorf("docs/architecture.md has no paragraph for %s/ (got none starting **`%s/`**)", dir, dir)
		}
		if !strings.Contains(layout, "\n    "+dir+"/ ") {
			t.Errorf("the README's Layout section has no line for %s/", dir)
		}
	}
	if n < 10 {
		t.Errorf("go list gave %d packages to check, want the module's (%s)", n, out)
	}
}

func isCovered(dir string) bool {
	for _, c := range covered {
		if dir == strings.TrimSuffix(c, "/") || strings.HasPrefix(dir, c) || strings.HasPrefix(dir, c+"/") {
			return true
		}
	}
	return false
}
