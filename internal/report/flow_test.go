// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

func flowRec(transport string, rpcs ...int64) result.FlowRecord {
	r := result.FlowRecord{Kind: result.KindFlow, Status: result.StatusOK, Transport: transport, PayloadBytes: 1e6,
		RTTNS: int64(64 * time.Millisecond), RPCsRequested: len(rpcs), RPCNS: rpcs}
	if len(rpcs) > 0 {
		r.FirstNS, r.SteadyNS = rpcs[0], rpcs[len(rpcs)-1]
	}
	return r
}

func TestFlowTableRatios(t *testing.T) {
	recs := []result.FlowRecord{
		flowRec(result.FlowGRPCDynamic, 455e6, 69e6),
		flowRec(result.FlowGRPCFixed, 1030e6, 1030e6),
		flowRec(result.FlowHTTP1, 65e6, 69e6),
	}
	recs[1].Status = result.StatusTruncated
	recs[1].RPCsRequested = 20
	var b strings.Builder
	if err := FlowTable(&b, recs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	tests := []string{
		"455.0",                         // first RPC, in ms
		"truncated (2/20 RPCs)",         // the fixed cell ran out of budget
		"grpc-dynamic/grpc-fixed 0.07x", // 69 / 1030
		"grpc-dynamic/http1 1.00x",
		"RTT 64ms, 1MB",
	}
	for _, want := range tests {
		if !strings.Contains(out, want) {
			t.Errorf("got table\n%s\nwant it to contain %q", out, want)
		}
	}
}

func TestFlowSectionCharts(t *testing.T) {
	recs := []result.FlowRecord{flowRec(result.FlowGRPCDynamic, 3e6, 2e6, 1e6), flowRec(result.FlowH2C, 1e6, 1e6, 1e6), flowRec(result.FlowHTTP1)}
	charts := FlowSection{Records: recs}.Charts()
	if len(charts) != 1 {
		t.Fatalf("got %d charts, want 1", len(charts))
	}
	c := charts[0]
	if c.Name != "flow-rtt64ms-1MB" || len(c.Series) != 2 {
		t.Fatalf("got %q with %d series, want flow-rtt64ms-1MB with 2 (no line for a cell without RPCs)", c.Name, len(c.Series))
	}
	if got := c.Series[0].Points[2]; got.X != 3 || got.Y != 1 {
		t.Errorf("got point %+v, want RPC 3 at 1 ms", got)
	}
	if _, err := c.PNG(); err != nil {
		t.Errorf("PNG: %v", err)
	}
}
