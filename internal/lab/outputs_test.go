// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	full := filepath.Join(dir, "full.jsonl")
	empty := filepath.Join(dir, "empty.jsonl")
	for _, f := range []string{in, full} {
		if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Link(in, link); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.csv")
	records := filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(records, []byte(`{"schema_version":1,"kind":"ping"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldCSV := filepath.Join(dir, "old.csv")
	if err := os.WriteFile(oldCSV, []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		inputs   []string
		force    bool
		outs     []Output
		wantName string // "" for no error
		want     error
	}{
		{"nothing", nil, false, []Output{{Name: "-o"}}, "", nil},
		{"new files", []string{in}, false, []Output{{Name: "-o", Path: fresh}, {Name: "--png", Path: filepath.Join(dir, "png"), Dir: true}}, "", nil},
		{"output is the input", []string{in}, false, []Output{{Name: "-o", Path: in}}, "-o", ErrSameFile},
		{"output is the input, spelled otherwise", []string{in}, false, []Output{{Name: "-o", Path: dir + "/./in.jsonl"}}, "-o", ErrSameFile},
		{"output is a hard link to the input", []string{in}, true, []Output{{Name: "-o", Path: link}}, "-o", ErrSameFile},
		{"two outputs, one file", nil, false, []Output{{Name: "--out", Path: fresh}, {Name: "--csv", Path: fresh}}, "--csv", ErrSameFile},
		{"records exist", nil, false, []Output{{Name: "--out", Path: full, Keep: true}}, "--out", ErrExists},
		{"records exist, forced", nil, true, []Output{{Name: "--out", Path: full, Keep: true}}, "", nil},
		{"records file empty", nil, false, []Output{{Name: "--out", Path: empty, Keep: true}}, "", nil},
		{"a report over an existing file", nil, false, []Output{{Name: "--report", Path: full}}, "--report", ErrExists},
		{"a CSV over an existing file", nil, false, []Output{{Name: "--csv", Path: oldCSV}}, "--csv", ErrExists},
		{"a CSV over an existing file, forced", nil, true, []Output{{Name: "--csv", Path: oldCSV}}, "", nil},
		{"a CSV over a records file, forced", nil, true, []Output{{Name: "--csv", Path: records}}, "--csv", ErrRecordsFile},
		{"a report over a records file, forced", nil, true, []Output{{Name: "-o", Path: records}}, "-o", ErrRecordsFile},
		{"records over a records file, forced", nil, true, []Output{{Name: "--out", Path: records, Keep: true}}, "", nil},
		{"the CSV is the records output through ./", nil, true, []Output{{Name: "--out", Path: records, Keep: true}, {Name: "--csv", Path: dir + "/./records.jsonl"}}, "--csv", ErrSameFile},
		{"file in a missing folder", nil, false, []Output{{Name: "--report", Path: filepath.Join(dir, "no", "x.html")}}, "--report", os.ErrNotExist},
		{"folder where a file goes", nil, false, []Output{{Name: "--csv", Path: dir}}, "--csv", nil},
		{"folder that cannot be made", nil, false, []Output{{Name: "--charts", Path: "/proc/rpclab-nonexist", Dir: true}}, "--charts", nil},
		{"file where a folder goes", nil, false, []Output{{Name: "--png", Path: full, Dir: true}}, "--png", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOutputs(tc.inputs, tc.force, tc.outs...)
			if tc.wantName == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			var oe *OutputError
			if !errors.As(err, &oe) || oe.Name != tc.wantName || !strings.HasPrefix(err.Error(), tc.wantName+" ") {
				t.Fatalf("got %v, want an OutputError naming %s", err, tc.wantName)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("got %v, want it to wrap %v", err, tc.want)
			}
		})
	}
	// Nothing was written or left behind.
	if b, _ := os.ReadFile(in); string(b) != "{}\n" {
		t.Errorf("the input now holds %q", b)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the probe left %s behind: %v", fresh, err)
	}
}

// TestWriteFile: an output is replaced only once its whole content is
// written: a write that fails leaves the file as it was, and no temporary
// file behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(path, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	tests := []struct {
		name  string
		write func(w io.Writer) error
		want  string
		err   error
	}{
		{"failed write keeps the file", func(w io.Writer) error { io.WriteString(w, "half"); return boom }, "before\n", boom},
		{"whole write replaces it", func(w io.Writer) error { _, err := io.WriteString(w, "after\n"); return err }, "after\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteFile(path, tc.write)
			if !errors.Is(err, tc.err) {
				t.Errorf("got error %v, want %v", err, tc.err)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.want {
				t.Errorf("got %q, want %q", b, tc.want)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".rpclab-*")); len(m) > 0 {
				t.Errorf("left behind %v", m)
			}
		})
	}
}
