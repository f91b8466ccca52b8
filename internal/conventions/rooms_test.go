// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docsKinds are the kinds of file docs/ holds: guides, their pictures and
// the published tables. A program (a Go package, an analysis script) lives
// with its study in experiments/ or with the code it serves.
var docsKinds = map[string]bool{".md": true, ".png": true, ".svg": true, ".csv": true, ".jsonl": true}

// TestDocsHoldNoPrograms: every file under docs/ is of a kind in docsKinds.
func TestDocsHoldNoPrograms(t *testing.T) {
	n := 0
	err := filepath.WalkDir("docs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		if !docsKinds[filepath.Ext(p)] {
			t.Errorf("%s: docs/ holds guides, pictures and published tables only, not a %q file", p, filepath.Ext(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("found %d files under docs/, want the repository's", n)
	}
}

// TestScriptsAreNamedTooling: every entry of scripts/ is named, as
// scripts/NAME, by the README or CONTRIBUTING.md, so scripts/ holds only
// the developer tooling they describe (studies' scripts live in
// experiments/).
func TestScriptsAreNamedTooling(t *testing.T) {
	var named strings.Builder
	for _, f := range []string{"README.md", "CONTRIBUTING.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		named.Write(b)
	}
	entries, err := os.ReadDir("scripts")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.Contains(named.String(), "scripts/"+e.Name()) {
			t.Errorf("scripts/%s is named by neither README.md nor CONTRIBUTING.md: tooling is documented there, a study's script lives in experiments/", e.Name())
		}
	}
}
