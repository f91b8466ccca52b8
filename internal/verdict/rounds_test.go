// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// TestRoundsEdges: a ratio measured in interleaved rounds is called a
// bottleneck only when its whole range is at or above BottleneckRatio; a
// range across the line is the host's noise (inconclusive, with the noise
// and what would settle it); a range wholly below it is judged by the
// other rules. Settled needs MinRounds rounds on one side of the line.
func TestRoundsEdges(t *testing.T) {
	build := func(ratios ...float64) []result.Record {
		// In-flight 1 and 2 as a climb gives them (pool:4 at 2 at the
		// first round's ratio: no growth to 4 for the median), then the
		// rounds at 4, the climb's step the first.
		recs := []result.Record{rec("shared", 1, 600), rec("pool:4", 1, 600), rec("shared", 2, 1000), rec("pool:4", 2, 1000*max(ratios[0], 1.4)),
			rec("shared", 4, 1000), rec("pool:4", 4, 1000*ratios[0])}
		for i, r := range ratios {
			if i > 0 { // the climb's step was the first round
				recs = append(recs, rec("pool:4", 4, 1000*r), rec("shared", 4, 1000))
			}
		}
		return recs
	}
	for _, tc := range []struct {
		name    string
		ratios  []float64
		want    Kind
		settled bool
		text    string
	}{
		{"low at BottleneckRatio", []float64{1.4, BottleneckRatio, 1.5}, ConnBottleneck, true, "gave 1.40x, 1.30-1.50 over 3 rounds"},
		{"low just below BottleneckRatio", []float64{1.4, BottleneckRatio - 0.01, 1.5}, Inconclusive, false, "differ by less than this host's noise (8%)"},
		{"two rounds clear of the line", []float64{1.4, 1.5}, ConnBottleneck, false, "over 2 rounds"},
		{"high just below BottleneckRatio", []float64{1.1, 1.0, BottleneckRatio - 0.01}, BoundElsewhere, true, "1.10x, 1.00-1.29 over 3 rounds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := Verdicts(build(tc.ratios...))
			if len(vs) != 1 || vs[0].Kind != tc.want || !strings.Contains(vs[0].Text, tc.text) {
				t.Fatalf("got %+v, want one %s verdict saying %q", vs, tc.want, tc.text)
			}
			if tc.want == Inconclusive && strings.Contains(vs[0].Text, "though") {
				t.Errorf("got %q: a noisy comparison must not quote one lower step's gain", vs[0].Text)
			}
			if got := Settled(vs[0]); got != tc.settled {
				t.Errorf("Settled: got %v, want %v", got, tc.settled)
			}
		})
	}
}
