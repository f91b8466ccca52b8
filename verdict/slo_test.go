// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"errors"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	tests := []struct {
		in    string
		q     float64
		bound time.Duration
	}{
		{"p99=1ms", 99, time.Millisecond},
		{"p999=250us", 99.9, 250 * time.Microsecond},
		{" p50=2s ", 50, 2 * time.Second},
		{"p99.5=3ms", 99.5, 3 * time.Millisecond},
	}
	for _, tc := range tests {
		got, err := ParseSLO(tc.in)
		if err != nil || got.Q != tc.q || got.Bound != tc.bound {
			t.Errorf("ParseSLO(%q) = %+v, %v; want q %v bound %v", tc.in, got, err, tc.q, tc.bound)
		}
	}
	for _, s := range []string{"p99", "q99=1ms", "p99=soon", "p0=1ms", "p99=-1ms", "p101=1ms"} {
		if _, err := ParseSLO(s); !errors.Is(err, ErrBadSLO) {
			t.Errorf("ParseSLO(%q): got %v, want an error wrapping ErrBadSLO", s, err)
		}
	}
}
