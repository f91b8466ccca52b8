// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package foreign

import (
	"math"

	"github.com/rpclab/rpclab/internal/flow"
	"github.com/rpclab/rpclab/internal/result"
)

const flowHeader = "rtt_ms,rpc_index,grpc_ms,http2_ms,http1_ms"

// flowPayloadBytes is the request of the grpc-go post's table: 1 MB
// (taken as 1 MiB, the size rpclab flow --payload 1MiB sends).
const flowPayloadBytes = 1 << 20

// flowColumns maps the table's transports to rpclab flow's: gRPC (grpc-go
// with BDP estimation) is grpc-dynamic, plain HTTP/2 is h2c, HTTP/1.1 is
// http1.
var flowColumns = []struct {
	col       int
	transport string
}{{2, result.FlowGRPCDynamic}, {3, result.FlowH2C}, {4, result.FlowHTTP1}}

// ParseFlowCSV reads the grpc-go post's table of the first RPCs on a fresh
// connection (header rtt_ms,rpc_index,grpc_ms,http2_ms,http1_ms, times in
// milliseconds): the rows of one RTT, numbered 1, 2, 3... in order, become
// one flow record per transport (gRPC as grpc-dynamic, HTTP/2 as h2c,
// HTTP/1.1 as http1) with a 1 MiB request, its RPC times in order and its
// first and steady-state times as rpclab flow computes them (flow.Steady).
// A wrong header, a short row, a value that is not a number, an RPC out of
// order or an RTT seen twice is an error naming its line and column.
func ParseFlowCSV(data []byte, o Options) ([]result.FlowRecord, error) {
	t, err := readTable(data, flowHeader)
	if err != nil {
		return nil, err
	}
	var recs []result.FlowRecord
	var cur []*result.FlowRecord
	var curRTT float64
	seen := map[float64]int{}
	for _, r := range t.rows {
		rtt, err := t.num(r, 0, 0, 1e6)
		if err != nil {
			return nil, err
		}
		idx, err := t.count(r, 1, 1, 1e6)
		if err != nil {
			return nil, err
		}
		if cur == nil || rtt != curRTT {
			if first, dup := seen[rtt]; dup {
				return nil, posErr(r.line, 1, "rtt_ms %s again (its rows began on line %d)", r.fields[0], first)
			}
			seen[rtt] = r.line
			if idx != 1 {
				return nil, posErr(r.line, 2, "rpc_index %d: the rows of RTT %s ms start at 1", idx, r.fields[0])
			}
			for _, c := range cur {
				recs = append(recs, *c)
			}
			cur, curRTT = nil, rtt
			for _, c := range flowColumns {
				cur = append(cur, &result.FlowRecord{
					SchemaVersion: result.SchemaVersion, Kind: result.KindFlow, Status: result.StatusOK,
					Transport: c.transport, PayloadBytes: flowPayloadBytes, RTTNS: int64(math.Round(rtt * 1e6)),
					Env:    result.Env{Language: "go", GRPCImpl: "grpc-go", RuntimeVersion: "grpc-go post's benchmark"},
					Source: o.Source,
				})
			}
		} else if want := int64(len(cur[0].RPCNS) + 1); idx != want {
			return nil, posErr(r.line, 2, "rpc_index %d, want %d (the RPCs of one RTT in order)", idx, want)
		}
		for i, c := range flowColumns {
			ms, err := t.num(r, c.col, 0, 1e7)
			if err != nil {
				return nil, err
			}
			cur[i].RPCNS = append(cur[i].RPCNS, int64(math.Round(ms*1e6)))
		}
	}
	for _, c := range cur {
		recs = append(recs, *c)
	}
	for i := range recs {
		recs[i].RPCsRequested = len(recs[i].RPCNS)
		flow.Steady(&recs[i])
	}
	return recs, nil
}
