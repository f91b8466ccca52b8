// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package extclient

import (
	"slices"
	"strings"
	"testing"
)

// writes records each Write call it gets.
type writes []string

func (w *writes) Write(p []byte) (int, error) {
	*w = append(*w, string(p))
	return len(p), nil
}

// A client's line printed in pieces reaches the driver's stream in one
// write, so the driver's own progress lines cannot land inside it.
func TestLineWriterPassesWholeLines(t *testing.T) {
	var got writes
	l := &lineWriter{w: &got}
	for _, p := range []string{"rpclab-client (java): step ", "5/12 unary", " pool\nnext", " line\n", "", "tail"} {
		if n, err := l.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	want := writes{"rpclab-client (java): step 5/12 unary pool\n", "next line\n"}
	if !slices.Equal(got, want) {
		t.Fatalf("before Flush got %q, want %q", got, want)
	}
	l.Flush()
	l.Flush()
	want = append(want, "tail\n")
	if !slices.Equal(got, want) {
		t.Fatalf("after Flush got %q, want %q", got, want)
	}
	// A line longer than maxPartialLine is passed on rather than held.
	got = nil
	long := strings.Repeat("x", maxPartialLine+1)
	if _, err := l.Write([]byte(long)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != long {
		t.Fatalf("a %d-byte partial line: got %d writes, want it passed on in one", len(long), len(got))
	}
}

func TestHasLayout(t *testing.T) {
	tests := []struct {
		lang, conn string
		want       bool
	}{
		{"go", "shared", true},
		{"java", "per-worker", true},
		{"rust", "pool:4", true},
		{"go", "pool:4:least-loaded", true},
		{"java", "pool:4:least-loaded", false},
		{"go", "channel-per-worker", false},
		{"java", "local-pool", false},
		{"rust", "distinct-args", false},
		{"cpp", "channel-per-worker", true},
		{"python", "local-pool", true},
		{"node", "distinct-args", true},
		{"cpp", "carrier-pigeon", false},
	}
	for _, tc := range tests {
		if got := HasLayout(tc.lang, tc.conn); got != tc.want {
			t.Errorf("HasLayout(%q, %q) = %v, want %v", tc.lang, tc.conn, got, tc.want)
		}
	}
}
