// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoJudge: loadgen runs load and hands records on; judging them
// (verdict: the SLO, the bottleneck), formatting them (report) and running
// a session (lab) are its callers'. go list -deps of loadgen holds none of
// them; an SLO reaches a sweep as a stop predicate (OpenSpec.Stop).
func TestImportsNoJudge(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list imports: %v", err)
	}
	const module = "github.com/rpclab/rpclab/"
	out, err := exec.CommandContext(t.Context(), gobin, "list", "-deps", "-f", "{{.ImportPath}}", module+"internal/loadgen").Output()
	if err != nil {
		t.Fatalf("go list -deps loadgen: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps loadgen listed nothing")
	}
	for _, p := range deps {
		for _, banned := range []string{"verdict", "report", "lab"} {
			if p == module+"internal/"+banned {
				t.Errorf("loadgen imports %s; got it in go list -deps, want none of verdict, report, lab", p)
			}
		}
	}
}
