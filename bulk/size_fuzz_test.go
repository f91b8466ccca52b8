// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/bulk"
	"github.com/rpclab/rpclab/result"
)

// FuzzParseBytes: ParseBytes never panics, every error is an ErrBadBytes
// naming the input, a result is never negative, and FormatBytes of a result
// parses back to it. Run: go test -run '^$' -fuzz FuzzParseBytes -fuzztime 60s ./bulk/
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"65536", "64KiB", "1GiB", "16 MiB", "1MB", "0", "1.5GiB", "lots", "-1", "-1KB", "-0",
		"9999999GiB", "9999999TiB", "10GB", "8388607TiB", "8388608TiB", "9223372036854775807", "9223372036854775808",
		"", " ", "KiB", "1kB", "+5", "0x10", "1e9", "64GiB", "65GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := bulk.ParseBytes(s)
		if err != nil {
			if !errors.Is(err, bulk.ErrBadBytes) {
				t.Fatalf("ParseBytes(%q) = %v, not an ErrBadBytes", s, err)
			}
			if n != 0 {
				t.Fatalf("ParseBytes(%q) = %d with an error", s, n)
			}
			if strings.ToValidUTF8(s, "") == s && !strings.Contains(err.Error(), strings.TrimSpace(s)) && s != "" {
				// The quoted value may escape some runes; check the plain ones.
				if isPlain(s) {
					t.Fatalf("ParseBytes(%q) = %v, want the error to name the value", s, err)
				}
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseBytes(%q) = %d, negative", s, n)
		}
		back, err := bulk.ParseBytes(result.FormatBytes(n))
		if err != nil || back != n {
			t.Fatalf("ParseBytes(FormatBytes(%d) = %q) = %d, %v; want %d", n, result.FormatBytes(n), back, err, n)
		}
	})
}

func isPlain(s string) bool {
	for _, r := range s {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}
