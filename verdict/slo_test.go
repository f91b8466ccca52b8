// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"errors"
	"regexp"
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
		{"p100=1m", 100, time.Minute}, // the largest latency: HDR's quantile 100 is its max
	}
	for _, tc := range tests {
		got, err := ParseSLO(tc.in)
		if err != nil || got.Q != tc.q || got.Bound != tc.bound {
			t.Errorf("ParseSLO(%q) = %+v, %v; want q %v bound %v", tc.in, got, err, tc.q, tc.bound)
		}
	}
	for _, s := range []string{"p99", "q99=1ms", "p99=soon", "p0=1ms", "p99=-1ms", "p101=1ms",
		"pNaN=1ms", "pnan=1ms", "pInf=1ms", "p+Inf=1ms", "p-Inf=1ms", "p0x1p6=1ms", "p9_9=1ms", "p1e2=1ms", "p+99=1ms"} {
		if _, err := ParseSLO(s); !errors.Is(err, ErrBadSLO) {
			t.Errorf("ParseSLO(%q): got %v, want an error wrapping ErrBadSLO", s, err)
		}
	}
}

// plainQuantile is the only spelling of a quantile --slo accepts.
var plainQuantile = regexp.MustCompile(`^p[0-9]+(\.[0-9]+)?$`)

// FuzzParseSLO: --slo never panics; what it accepts is a quantile in
// (0, 100] (never NaN or infinite), spelled in decimal digits, with a positive bound that parses back from its String, and
// what it refuses wraps ErrBadSLO.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p99=1ms", "p999=250us", " p50=2s ", "p99.5=3ms", "p99", "q99=1ms", "p99=soon", "p0=1ms", "p99=-1ms", "p101=1ms", "p=1ms", "p9.9.9=1ms", "p100=1m", "pNaN=1ms", "pInf=1ms", "p0x1p6=1ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			if !errors.Is(err, ErrBadSLO) {
				t.Fatalf("ParseSLO(%q): got %v, want an error wrapping ErrBadSLO", s, err)
			}
			return
		}
		if !(slo.Q > 0 && slo.Q <= 100) || slo.Bound <= 0 || !plainQuantile.MatchString(slo.Name) {
			t.Fatalf("ParseSLO(%q) = %+v: quantile or bound out of range", s, slo)
		}
		back, err := ParseSLO(slo.String())
		if err != nil || back.Q != slo.Q || back.Bound != slo.Bound {
			t.Fatalf("ParseSLO(%q) = %+v; its String %q parses to %+v, %v", s, slo, slo.String(), back, err)
		}
	})
}
