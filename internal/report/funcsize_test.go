// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function of report may be, from its func
// line to its closing brace (docs/architecture.md: "no function over ~80
// lines").
const maxFuncLines = 80

// boolFacts are the bool parameters that state a fact to print rather
// than pick a mode (none now).
var boolFacts = map[string]bool{}

// reportFuncs parses the package's non-test Go files and calls visit with
// every function declaration and function literal.
func reportFuncs(t *testing.T, visit func(fset *token.FileSet, name string, ft *ast.FuncType, body *ast.BlockStmt, pos token.Pos)) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var n int
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		n++
		ast.Inspect(file, func(node ast.Node) bool {
			switch fn := node.(type) {
			case *ast.FuncDecl:
				if fn.Body != nil {
					visit(fset, fn.Name.Name, fn.Type, fn.Body, fn.Pos())
				}
			case *ast.FuncLit:
				visit(fset, "func literal", fn.Type, fn.Body, fn.Pos())
			}
			return true
		})
	}
	if n < 10 {
		t.Fatalf("parsed %d files, want the package's (run from report/)", n)
	}
}

// TestNoLongFunctions: no function in report (tests aside) runs over
// maxFuncLines lines.
func TestNoLongFunctions(t *testing.T) {
	reportFuncs(t, func(fset *token.FileSet, name string, _ *ast.FuncType, body *ast.BlockStmt, pos token.Pos) {
		start, end := fset.Position(pos), fset.Position(body.End())
		if got := end.Line - start.Line + 1; got > maxFuncLines {
			t.Errorf("%s:%d: %s is %d lines, want at most %d: split it", start.Filename, start.Line, name, got, maxFuncLines)
		}
	})
}

// TestNoBoolModeParameters: report's functions take no bool that picks a
// mode (one type or one figure list per case instead); the facts in
// boolFacts aside.
func TestNoBoolModeParameters(t *testing.T) {
	reportFuncs(t, func(fset *token.FileSet, name string, ft *ast.FuncType, _ *ast.BlockStmt, pos token.Pos) {
		for _, p := range ft.Params.List {
			if id, ok := p.Type.(*ast.Ident); !ok || id.Name != "bool" {
				continue
			}
			for _, n := range p.Names {
				if !boolFacts[name+"."+n.Name] {
					t.Errorf("%s: %s takes bool %s, want a type or a figure list per case", fset.Position(pos), name, n.Name)
				}
			}
		}
	})
}
