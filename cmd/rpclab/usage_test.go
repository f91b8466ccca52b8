// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"
)

// TestBadSettingOfEachStudyExitsTwo: a bad setting found by each study's
// own package (loadgen, bulk, flow, netem) is a *usage.Error that run
// maps, in one place, to exit 2 and one line naming the flag.
func TestBadSettingOfEachStudyExitsTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"sweep (loadgen)", []string{"sweep", "--warmup", "-1s"}, "rpclab: --warmup: negative duration -1s\n"},
		{"bulk", []string{"bulk", "--streams", "0"}, "rpclab: bulk: --streams 0: must be at least 1\n"},
		{"flow", []string{"flow", "--rpcs", "0"}, "rpclab: --rpcs: 0 RPCs per cell: want at least 1\n"},
		{"netem", []string{"netem", "--upstream", "127.0.0.1:1", "--jitter=-1us"}, "rpclab: --jitter: negative jitter -1µs\n"},
		{"netem down direction", []string{"netem", "--upstream", "127.0.0.1:1", "--down-jitter=-1us"}, "rpclab: --down-jitter: negative jitter -1µs\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage || stderr != tc.want {
				t.Errorf("got exit %d and %q, want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}
