// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImpossibleValuesRefused: rpclab validate and rpclab report refuse a
// record with an in-flight count of 1e18, and rpclab import refuses a ghz
// report with connections -3 and concurrency 1e15, each naming the field
// and its value, and writing nothing.
func TestImpossibleValuesRefused(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open("../../testdata/results/go-sweep.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	sc.Scan()
	var r map[string]any
	err = json.Unmarshal(sc.Bytes(), &r)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	r["spec"].(map[string]any)["inflight"] = json.Number("1000000000000000000")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "inflight.jsonl")
	if err := os.WriteFile(rec, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", rec}, {"report", rec, "-o", filepath.Join(dir, "r.html")}} {
		code, _, stderr := runInProcess(args...)
		if code != exitFailure || !strings.Contains(stderr, "/spec/inflight") || !strings.Contains(stderr, "maximum") || !strings.Contains(stderr, "10¹⁸") {
			t.Errorf("%s in-flight 1e18: exit %d, %q; want %d naming /spec/inflight, its value and its maximum", args[0], code, stderr, exitFailure)
		}
	}

	var g map[string]any
	gb, err := os.ReadFile("../../internal/foreign/testdata/ghz.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(gb, &g); err != nil {
		t.Fatal(err)
	}
	opts := g["options"].(map[string]any)
	opts["connections"], opts["concurrency"] = -3, json.Number("1000000000000000")
	if gb, err = json.Marshal(g); err != nil {
		t.Fatal(err)
	}
	ghz := filepath.Join(dir, "ghz.json")
	if err := os.WriteFile(ghz, gb, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	code, _, stderr := runInProcess("import", "--format", "ghz-json", ghz, "-o", out)
	for _, want := range []string{"options.connections -3", "options.concurrency 1000000000000000"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("import of a ghz report with connections -3, concurrency 1e15: exit %d, %q; want %d naming %q", code, stderr, exitUsage, want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("import wrote %s after refusing its input (%v)", out, err)
	}
}
