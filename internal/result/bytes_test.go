// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"65536", 65536, true}, {"64KiB", 64 << 10, true}, {"1GiB", 1 << 30, true}, {"16 MiB", 16 << 20, true},
		{"1MB", 1e6, true}, {"0", 0, true}, {"1.5GiB", 0, false}, {"lots", 0, false}, {"9999999TiB", 0, false},
		{"9223372036854775807", 1<<63 - 1, true}, {"9223372036854775808", 0, false}, {"8388608TiB", 0, false},
		{"8388607TiB", 8388607 << 40, true}, {"-1", 0, false}, {"-1KB", 0, false}, {"-0", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseBytes(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	// Each error names the value and what is wrong with it.
	for in, want := range map[string]string{
		"-1": "negative", "-1KB": "negative", "-99999999999999999999": "negative",
		"9999999TiB": "above the largest byte count", "99999999999999999999": "above the largest byte count",
		"1.5GiB": "want an integer",
	} {
		_, err := ParseBytes(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), strconv.Quote(in)) || !errors.Is(err, ErrBadBytes) {
			t.Errorf("ParseBytes(%q) = %v, want an ErrBadBytes naming %q and saying %q", in, err, in, want)
		}
	}
	for _, n := range []int64{64 << 10, 1 << 30, 1000, 3 << 20} {
		if got, _ := ParseBytes(FormatBytes(n)); got != n {
			t.Errorf("ParseBytes(FormatBytes(%d)) = %d, want %d", n, got, n)
		}
	}
}

// FuzzParseBytes: ParseBytes never panics, every error is an ErrBadBytes
// naming the input, a result is never negative, and FormatBytes of a result
// parses back to it. Run: go test -run '^$' -fuzz FuzzParseBytes -fuzztime 60s ./result/
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"65536", "64KiB", "1GiB", "16 MiB", "1MB", "0", "1.5GiB", "lots", "-1", "-1KB", "-0",
		"9999999GiB", "9999999TiB", "10GB", "8388607TiB", "8388608TiB", "9223372036854775807", "9223372036854775808",
		"", " ", "KiB", "1kB", "+5", "0x10", "1e9", "64GiB", "65GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err != nil {
			if !errors.Is(err, ErrBadBytes) {
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
		back, err := ParseBytes(FormatBytes(n))
		if err != nil || back != n {
			t.Fatalf("ParseBytes(FormatBytes(%d) = %q) = %d, %v; want %d", n, FormatBytes(n), back, err, n)
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
