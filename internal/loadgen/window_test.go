// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/rpclab/rpclab/internal/stats"
)

// TestWindowMemoryPerCaller: a window's recorders for 4,000 callers take
// the histograms of stats.OwnHistograms callers and stats.Shards(), plus
// under 1 KB per caller (a Live run: two of each), where a histogram per
// caller took 229 KB each (issue 25: 3.4 GB at 10,000 in flight).
func TestWindowMemoryPerCaller(t *testing.T) {
	const callers = 4000
	hists := uint64(stats.OwnHistograms+stats.Shards()) * 240 << 10
	for _, tc := range []struct {
		name    string
		win     func() window
		perCall uint64 // recorders per caller
	}{
		{"fixed", func() window { return &fixedWindow{} }, 1},
		{"live", func() window { return &Live{} }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			w := tc.win()
			recs := make([]recorder, callers) // held as the callers hold theirs
			for i := range recs {
				recs[i] = w.recorder()
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			limit := tc.perCall * (hists + callers*1024)
			if got := after.HeapAlloc - before.HeapAlloc; got > limit {
				t.Errorf("got %s for %d callers, want at most %s", mib(got), callers, mib(limit))
			}
			runtime.KeepAlive(w)
			runtime.KeepAlive(recs)
		})
	}
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
