// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the prefix of rpclab's own packages.
const module = "github.com/rpclab/rpclab/"

// moduleDeps lists the packages of this module that pkg imports, directly or
// not, itself included, as go list -deps gives them.
func moduleDeps(t *testing.T, pkg string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list imports: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), gobin, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var deps []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, module) {
			deps = append(deps, p)
		}
	}
	return deps
}

// TestImportsOnlyResultAndVerdict: report formats records and verdicts;
// among rpclab's packages it reaches result and verdict and what they
// import, never an engine (loadgen, bulk, flow, netem, server, lab, ...).
func TestImportsOnlyResultAndVerdict(t *testing.T) {
	allowed := []string{module + "internal/report"}
	for _, p := range []string{"result", "verdict"} {
		allowed = append(allowed, moduleDeps(t, module+"internal/"+p)...)
	}
	slices.Sort(allowed)
	allowed = slices.Compact(allowed)
	for _, p := range moduleDeps(t, module+"internal/report") {
		if !slices.Contains(allowed, p) {
			t.Errorf("report imports %s; got it in go list -deps, want only result, verdict and their imports (%v)", p, allowed)
		}
	}
}
