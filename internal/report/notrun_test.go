// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// TestTableStepNeverRan: a step that never ran (no RPC ended: the target
// was unreachable, the run stopped first) has no efficiency: the table
// prints "-" there, not 0 %, while the steps that ran keep theirs.
func TestTableStepNeverRan(t *testing.T) {
	recs := append([]result.Record(nil), fixture(t, "shared-bottleneck.jsonl")[0].Records[:3]...)
	last := &recs[2]
	last.Status, last.Error = result.StatusFailed, "target unreachable: not run"
	last.Requests, last.ThroughputRPS, last.Errors, last.HistogramHDR = 0, 0, map[string]int64{}, ""
	var b bytes.Buffer
	if err := Table(&b, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")[1:]
	for i, want := range []bool{true, true, false} {
		eff := strings.Fields(lines[i])[6] // client conn rpc inflight throughput ideal efficiency
		if got := eff != "-"; got != want {
			t.Errorf("row %d: got efficiency %q, want a number: %v", i+1, eff, want)
		}
	}
}
