// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package stats

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want float64
		ok   bool
	}{
		{"none", nil, 0, false},
		{"empty", []float64{}, 0, false},
		{"one", []float64{7}, 7, true},
		{"odd, unsorted", []float64{9, 1, 5}, 5, true},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5, true},
		{"repeats", []float64{2, 2, 2, 9}, 2, true},
		{"negative", []float64{-3, -1, -2}, -2, true},
		{"infinity in the tail", []float64{1, 2, math.Inf(1)}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			got, ok := Median(in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Median(%v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("Median changed its argument: %v, was %v", in, tc.in)
			}
		})
	}
}

// TestMedianIntegers: an even count's mean of the middle two rounds toward
// zero, as integer division does, for integer types and durations.
func TestMedianIntegers(t *testing.T) {
	if got, _ := Median([]int64{1, 2, 4, 100}); got != 3 {
		t.Errorf("Median(1, 2, 4, 100) = %d, want 3 ((2+4)/2)", got)
	}
	if got, _ := Median([]int64{1, 2, 3, 100}); got != 2 {
		t.Errorf("Median(1, 2, 3, 100) = %d, want 2 ((2+3)/2 rounded toward zero)", got)
	}
	if got, _ := Median([]time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}); got != 2*time.Millisecond {
		t.Errorf("Median(3ms, 1ms, 2ms) = %v, want 2ms", got)
	}
}
