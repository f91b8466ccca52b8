// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package limitread

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: a file up to the limit is read whole; one past it, or a
// device that never ends (/dev/zero), is an error wrapping ErrTooLarge
// that names the file and the limit, after reading at most limit+1 bytes.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at")
	over := filepath.Join(dir, "over")
	if err := os.WriteFile(at, []byte("12345678"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, []byte("123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		want    string
		wantErr error
	}{
		{"at the limit", at, "12345678", nil},
		{"one byte over", over, "", ErrTooLarge},
		{"an endless device", "/dev/zero", "", ErrTooLarge},
		{"missing", filepath.Join(dir, "none"), "", os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadFile(tc.path, 8)
			if !errors.Is(err, tc.wantErr) || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tc.path) {
				t.Errorf("got %v, want it to name %s", err, tc.path)
			}
			if errors.Is(err, ErrTooLarge) && !strings.Contains(err.Error(), "8 bytes") {
				t.Errorf("got %v, want it to state the limit, 8 bytes", err)
			}
		})
	}
}

// TestOpen: the reader Open returns gives the first limit bytes, then an
// error wrapping ErrTooLarge instead of the rest.
func TestOpen(t *testing.T) {
	r, err := Open("/dev/zero", 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if !errors.Is(err, ErrTooLarge) || n != 1<<10 {
		t.Errorf("got %d bytes, %v; want 1024 and ErrTooLarge", n, err)
	}
}

func TestFormatLimit(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{{8, "8 bytes"}, {1 << 20, "1 MiB"}, {64 << 20, "64 MiB"}, {1 << 30, "1 GiB"}, {1536, "1536 bytes"}}
	for _, tc := range tests {
		if got := FormatLimit(tc.n); got != tc.want {
			t.Errorf("FormatLimit(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
