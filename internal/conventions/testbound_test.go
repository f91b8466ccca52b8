// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ownBounds lists the test files allowed to declare their own test
// timeout instead of taking internal/testutil's (Context, LongContext,
// DefaultTimeout, LongTimeout): none.
var ownBounds = map[string]bool{}

// testTimeoutName is the name of a test's own timeout constant.
var testTimeoutName = regexp.MustCompile(`(?i)test_?timeout$`)

// TestTestsTakeTheirBoundFromTestutil: no test file declares a constant
// named like a test timeout (defaultTestTimeout, javaTestTimeout) beside
// internal/testutil's, except those in ownBounds.
func TestTestsTakeTheirBoundFromTestutil(t *testing.T) {
	found, err := ownTestTimeouts(".")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range found {
		seen[f] = true
		if !ownBounds[f] {
			t.Errorf("%s declares its own test timeout: use testutil.Context or LongContext (DefaultTimeout, LongTimeout)", f)
		}
	}
	for f := range ownBounds {
		if !seen[f] {
			t.Logf("%s no longer declares its own test timeout: remove it from ownBounds", f)
		}
	}
}

// TestOwnTestTimeoutsFound: the check sees a test file's own timeout
// constant, grouped or not, and passes over other constants and non-test
// files.
func TestOwnTestTimeoutsFound(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"a_test.go": "package x\n\nimport \"time\"\n\nconst defaultTestTimeout = time.Minute\n",
		"b_test.go": "package x\n\nconst (\n\tn = 1\n\tjavaTestTimeout = 3\n)\n",
		"c_test.go": "package x\n\nconst stallTimeout = 1\n",
		"d.go":      "package x\n\nconst defaultTestTimeout = 1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := ownTestTimeouts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(found, ",") != "a_test.go,b_test.go" {
		t.Errorf("found %q, want a_test.go and b_test.go", found)
	}
}

// ownTestTimeouts lists the test files under root (paths from root) that
// declare a top-level constant named like a test timeout.
func ownTestTimeouts(root string) ([]string, error) {
	var out []string
	err := walkGoFiles(root, func(name string) bool { return strings.HasSuffix(name, "_test.go") }, func(p, rel string) error {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if declaresTestTimeout(f) {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

func declaresTestTimeout(f *ast.File) bool {
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, name := range spec.(*ast.ValueSpec).Names {
				if testTimeoutName.MatchString(name.Name) {
					return true
				}
			}
		}
	}
	return false
}

// TestOneFakeClock: no test declares a clock type of its own beside
// internal/testutil's FakeClock, except the pool's (a module of its own,
// which cannot import the lab's internal packages).
func TestOneFakeClock(t *testing.T) {
	decl := regexp.MustCompile(`(?m)^type (?i:fake|manual|test)Clock\b`)
	err := walkGoFiles(".", func(string) bool { return true }, func(p, rel string) error {
		if strings.HasPrefix(rel, "pool/") || strings.HasPrefix(rel, "experiments/") || rel == "internal/testutil/clock.go" {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if decl.Match(src) {
			t.Errorf("%s declares a clock of its own: use testutil.FakeClock", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
