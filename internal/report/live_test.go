// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// TestLiveText: a committed live window (a Go client at a stream limit of
// 1 with 8 calls in flight) prints its connections, channelz map, the
// verdict and the change in Go; the same window from a Python process
// prints Python's change; the report's section shows it with its time
// line.
func TestLiveText(t *testing.T) {
	set, err := result.ReadAllFile(context.Background(), "../result/testdata/live.jsonl")
	if err != nil || len(set.Live) == 0 {
		t.Fatalf("%v (%d live records)", err, len(set.Live))
	}
	r := set.Live[0]
	var b strings.Builder
	LiveText(&b, &r)
	for _, want := range []string{"Verdict (stream-limit)", "use 8 connections", "pool.WithSize(8)", "subchannel", "CPU: the process used"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	r.Process.Language = "python"
	b.Reset()
	LiveText(&b, &r)
	if !strings.Contains(b.String(), poolChanges["python"].lines[0]) {
		t.Errorf("no Python change in\n%s", b.String())
	}
	res := &Results{Live: set.Live}
	secs := res.Sections()
	if len(secs) != 1 || secs[0].Kind() != result.KindLive {
		t.Fatalf("sections %v, want the live one", secs)
	}
	h, err := secs[0].html()
	if err != nil || !strings.Contains(string(h), "time line") {
		t.Errorf("html: %v, %.200s", err, h)
	}
	charts := secs[0].Charts()
	var names []string
	for _, c := range charts {
		names = append(names, c.Name)
		if len(c.Series) == 0 || len(c.Series[0].Points) == 0 {
			t.Errorf("chart %s has no points", c.Name)
		}
	}
	if len(charts) != 3 || !strings.HasSuffix(names[2], "-streams") {
		t.Errorf("charts %q, want bytes, cpu and streams", names)
	}
}
