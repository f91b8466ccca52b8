// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files from what the code writes now:
// go test ./internal/report -run TestGolden -update (then read the diff).
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGolden: the text tables and the CSV, written from the fixed records
// in testdata, are byte for byte the golden files. The inputs: fixtures
// of gen_fixtures.go, YDB's published table (a copy of
// docs/published/ydb-2025-single-connection.jsonl), a bulk and a flow run (copies of
// docs/img/bulk-results.jsonl and result/testdata/flow.jsonl) and a
// compare run (docs/img/compare-results.jsonl).
func TestGolden(t *testing.T) {
	tests := []struct {
		golden string
		inputs []string
		write  func(w io.Writer, res *Results) error
	}{
		{"table.golden", []string{"healthy.jsonl"}, func(w io.Writer, res *Results) error { return Table(w, res.Runs[0].Records) }},
		{"csv.golden", []string{"shared-bottleneck.jsonl"}, func(w io.Writer, res *Results) error { return CSV(w, res.Runs[0].Records) }},
		{"open-table.golden", []string{"open-loop.jsonl"}, func(w io.Writer, res *Results) error { return OpenTable(w, res.Runs[0].Records) }},
		{"ydb-table.golden", []string{"ydb-2025-single-connection.jsonl"}, func(w io.Writer, res *Results) error { return Table(w, res.Runs[0].Records) }},
		{"ydb-csv.golden", []string{"ydb-2025-single-connection.jsonl"}, func(w io.Writer, res *Results) error { return CSV(w, res.Runs[0].Records) }},
		{"clients-table.golden", []string{"compare.jsonl"}, func(w io.Writer, res *Results) error { return ClientTable(w, res.Runs[0].Records) }},
		{"section-ping.golden", []string{"healthy.jsonl", "open-loop.jsonl"}, sectionTable(0)},
		{"section-bulk.golden", []string{"bulk.jsonl"}, sectionTable(0)},
		{"section-flow.golden", []string{"flow.jsonl"}, sectionTable(0)},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			var paths []string
			for _, in := range tc.inputs {
				paths = append(paths, filepath.Join("testdata", in))
			}
			res, _, err := Load(context.Background(), paths)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := tc.write(&got, res); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to write it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("got\n%s\nwant (%s)\n%s", got.Bytes(), golden, want)
			}
		})
	}
}

// sectionTable writes the table of the i-th section of the results.
func sectionTable(i int) func(w io.Writer, res *Results) error {
	return func(w io.Writer, res *Results) error { return res.Sections()[i].Table(w) }
}
