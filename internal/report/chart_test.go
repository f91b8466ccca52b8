// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

func TestInflightTicks(t *testing.T) {
	seq := func(n int) []float64 {
		var xs []float64
		for i := 1; i <= n; i++ {
			xs = append(xs, float64(i))
		}
		return xs
	}
	tests := []struct {
		name string
		xs   []float64
		want []string
	}{
		{name: "ten or fewer: all", xs: []float64{1, 2, 4, 8, 16, 32}, want: []string{"1", "2", "4", "8", "16", "32"}},
		{name: "1..21: every third, the last not crowded", xs: seq(21), want: []string{"1", "4", "7", "10", "13", "16", "21"}},
		{name: "1..12: every second and the last", xs: seq(12), want: []string{"1", "3", "5", "7", "9", "12"}},
		{name: "1..11: the last a step after", xs: seq(11), want: []string{"1", "3", "5", "7", "9", "11"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := inflightTicks(tc.xs).(plot.ConstantTicks)
			var got []string
			for _, tk := range ts {
				if tk.Label != "" {
					got = append(got, tk.Label)
				}
			}
			if len(ts) != len(tc.xs) || !slices.Equal(got, tc.want) {
				t.Errorf("got %d ticks labelled %q, want %d labelled %q", len(ts), got, len(tc.xs), tc.want)
			}
		})
	}
}
