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

// TestValidateRefusesImpossible: rpclab validate and rpclab report refuse
// a record the schema allows but no run can give, naming the file and
// the line: an ok record with ten times more errors than requests (which
// the verdict would call a connection bottleneck), a throughput of
// 1e308, a histogram that does not decode.
func TestValidateRefusesImpossible(t *testing.T) {
	f, err := os.Open("../../testdata/results/go-sweep.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	sc.Scan()
	first := sc.Text()
	f.Close()
	tests := []struct {
		name   string
		change func(r map[string]any)
		want   string
	}{
		{"errors above requests", func(r map[string]any) {
			r["errors"] = map[string]any{"Unavailable": 10 * r["requests"].(float64)}
		}, "above requests"},
		{"throughput 1e308", func(r map[string]any) { r["throughput_rps"] = 1e308 }, "throughput_rps 1e+308 is impossible"},
		{"histogram that does not decode", func(r map[string]any) { r["histogram_hdr"] = "HISTFAAAAB94nJNpmSzMwMBgAgADBwDJ" }, "histogram_hdr does not decode"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r map[string]any
			if err := json.Unmarshal([]byte(first), &r); err != nil {
				t.Fatal(err)
			}
			tc.change(r)
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl")
			if err := os.WriteFile(path, append([]byte(first+"\n"), append(b, '\n')...), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"validate", path}, {"report", path, "-o", filepath.Join(dir, "r.html")}} {
				code, _, stderr := runInProcess(args...)
				if code != exitFailure || !strings.Contains(stderr, path+": line 2") || !strings.Contains(stderr, tc.want) {
					t.Errorf("%s: got exit %d, %q; want %d naming %s: line 2 and %q", args[0], code, stderr, exitFailure, path, tc.want)
				}
			}
		})
	}
}
