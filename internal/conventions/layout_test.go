// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// covered are the folders whose Go packages one entry covers: proto/ (the
// generated code), clients/ (clients/<lang>/ and the conformance tests),
// scripts/, experiments/, docs/, and pool's sub-packages (pool/'s paragraph
// and line cover them).
var covered = []string{"proto", "clients/", "scripts/", "experiments/", "docs", "pool/adaptive", "pool/internal/"}

// TestLayoutDocsMatchTheTree: every Go package of the module has its
// paragraph in docs/architecture.md, and every top-level folder its line in
// the README's Layout section (no line for a folder that is gone), so a
// package or folder added or moved shows up in both.
func TestLayoutDocsMatchTheTree(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list packages: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), gobin, "list", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = "."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	arch, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	checkTopLevel(t, layout)
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

// layoutLine is one line of the README's Layout section: a folder, then
// what it holds.
var layoutLine = regexp.MustCompile(`(?m)^    ([a-z][a-z0-9_-]*)/ +\S`)

// checkTopLevel: the Layout section has one line for each top-level folder
// of the repository (hidden ones and bin/, the build's output, aside), and
// none for a folder that does not exist.
func checkTopLevel(t *testing.T, layout string) {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for _, m := range layoutLine.FindAllStringSubmatch(layout, -1) {
		listed[m[1]]++
	}
	dirs := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "bin" {
			continue
		}
		dirs[e.Name()] = true
		if listed[e.Name()] != 1 {
			t.Errorf("the README's Layout section has %d lines for %s/, want 1", listed[e.Name()], e.Name())
		}
	}
	for d := range listed {
		if !dirs[d] {
			t.Errorf("the README's Layout section lists %s/, which is not a top-level folder", d)
		}
	}
	if len(dirs) < 10 {
		t.Errorf("found %d top-level folders, want the repository's", len(dirs))
	}
}
