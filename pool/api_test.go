// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// publicAPI is every identifier the package exports (types, functions,
// constants, variables) and every method of *Pool. Adding one is a
// decision: add it here, within the cap of 30 top-level identifiers.
var publicAPI = map[string][]string{
	"top": {"ErrClosed", "ErrInvalidOption", "ErrEmptyTarget", "ErrDial", "Option", "MaxSize",
		"DefaultRedialAfter", "DefaultGrowthIdle", "DefaultSize", "WithSize", "WithAdaptive",
		"WithDialOptions", "WithPolicy", "WithLazy", "WithRedialAfter", "WithLogger", "WithDialer",
		"WithStreamLimit", "WithGrowthIdle", "WithMeterProvider", "Policy", "RoundRobin",
		"LeastLoaded", "ParsePolicy", "Pool", "New", "Stats", "Event", "ConnStats"},
	"Pool": {"Target", "Size", "Invoke", "NewStream", "Connect", "Close", "Shutdown", "Stats", "Settling"},
}

// TestPublicAPI: the package exports what publicAPI lists, no more and no
// less, and at most 30 top-level identifiers, so that a reader of its
// godoc takes it in at a glance.
func TestPublicAPI(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names, methods []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				switch {
				case !d.Name.IsExported():
				case d.Recv == nil:
					names = append(names, d.Name.Name)
				case recvName(d.Recv) == "Pool":
					methods = append(methods, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	if len(names) > 30 {
		t.Errorf("pool exports %d identifiers, want at most 30: %v", len(names), names)
	}
	sameSet(t, "exported identifiers", names, publicAPI["top"])
	sameSet(t, "methods of *Pool", methods, publicAPI["Pool"])
	t.Logf("%d exported: %v; *Pool: %v", len(names), names, methods)
}

// recvName is the type a method's receiver names, without its star.
func recvName(recv *ast.FieldList) string {
	typ := recv.List[0].Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = st.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// sameSet fails t when got and want differ as sets, naming the differences.
func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	in := map[string]int{}
	for _, n := range got {
		in[n]++
	}
	for _, n := range want {
		in[n] -= 2
	}
	for n, v := range in {
		switch v {
		case 1:
			t.Errorf("%s: %s is exported but not in publicAPI: add it there deliberately, or unexport it", what, n)
		case -2:
			t.Errorf("%s: %s is in publicAPI but not exported", what, n)
		}
	}
}

// TestSourceLimits: no Go file under pool/ runs over 500 lines, no
// function over 80, and no comment names a rule letter, a date, an issue
// or a measurement folder: the code says what it does, not its history.
func TestSourceLimits(t *testing.T) {
	history := regexp.MustCompile(`(?i)\brules? [a-z]\b|\b20\d\d-\d\d-\d\d\b|\bissue \d+|docs/measured|\bpilot\b`)
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if n := fset.Position(f.End()).Line; n > 500 {
			t.Errorf("%s: %d lines, want at most 500", path, n)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 80 {
					t.Errorf("%s: %s is %d lines, want at most 80", path, fn.Name.Name, n)
				}
			}
		}
		for _, g := range f.Comments {
			if m := history.FindString(g.Text()); m != "" {
				t.Errorf("%s:%d: a comment names %q", path, fset.Position(g.Pos()).Line, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
