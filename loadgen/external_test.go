// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

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
