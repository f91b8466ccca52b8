// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"errors"
	"math"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// FuzzParseRate: ParseRate never panics, every error is an ErrBadRate, a
// rate is never negative nor below a byte per second (0 aside), a valid
// rate makes a Link that validates, and result.FormatRate's output parses back to
// within rounding. Run: go test -run '^$' -fuzz FuzzParseRate -fuzztime 60s ./netem/
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"1gbit", "1Gbit", "2.5gbit", "100mbit", "64kbit", "800bit", "125mbps", "1000000", "0",
		" 10mbit ", "1 gigabit", "gbit", "", "-1gbit", "4bit", "2000", "2000bit", "1e400gbit", "NaN", "inf", "-0",
		"1e18tbit", "0.5bit", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bps, err := ParseRate(s)
		if err != nil {
			if !errors.Is(err, ErrBadRate) {
				t.Fatalf("ParseRate(%q) = %v, not an ErrBadRate", s, err)
			}
			return
		}
		if bps < 0 || (bps > 0 && bps < 8) {
			t.Fatalf("ParseRate(%q) = %d bit/s, out of range", s, bps)
		}
		if err := (Link{RateBps: bps}).Validate(); err != nil {
			t.Fatalf("ParseRate(%q) = %d, which Link.Validate refuses: %v", s, bps, err)
		}
		back, err := ParseRate(result.FormatRate(bps))
		if err != nil {
			t.Fatalf("ParseRate(result.FormatRate(%d) = %q): %v", bps, result.FormatRate(bps), err)
		}
		if d := math.Abs(float64(back - bps)); d > 1e-9*float64(bps)+1 {
			t.Fatalf("ParseRate(result.FormatRate(%d) = %q) = %d", bps, result.FormatRate(bps), back)
		}
	})
}
