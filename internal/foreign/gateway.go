// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package foreign

import (
	"math"

	"github.com/rpclab/rpclab/internal/result"
)

const gatewayHeader = "clients,goroutines,requests,qps"

// ParseGatewayCSV reads the Go gateway write-up's table (header
// clients,goroutines,requests,qps): its client ran GOROUTINES callers in a
// closed loop over CLIENTS grpc.ClientConns picked round-robin, until
// REQUESTS calls were made. Each row becomes a closed-loop ping record:
// in-flight the goroutines, layout shared for one ClientConn and pool:N
// (round-robin) for N, the requests and throughput as published, the
// interval requests/qps; the table gives no latency (left 0) and no CPU.
// A wrong header, a short row, a value that is not a number, more
// ClientConns than callers or a layout and in-flight count seen twice is
// an error naming its line and column.
func ParseGatewayCSV(data []byte, o Options) ([]result.Record, error) {
	t, err := readTable(data, gatewayHeader)
	if err != nil {
		return nil, err
	}
	var recs []result.Record
	seen := map[[2]int64]int{}
	for _, r := range t.rows {
		clients, err := t.count(r, 0, 1, 1e6)
		if err != nil {
			return nil, err
		}
		callers, err := t.count(r, 1, 1, 1e6)
		if err != nil {
			return nil, err
		}
		requests, err := t.count(r, 2, 1, 1e15)
		if err != nil {
			return nil, err
		}
		qps, err := t.num(r, 3, 0, 1e9)
		if err != nil {
			return nil, err
		}
		if qps == 0 {
			return nil, posErr(r.line, 4, "qps 0: a run that made %d requests took some time", requests)
		}
		if clients > callers {
			return nil, posErr(r.line, 1, "clients %d above goroutines %d: a ClientConn no caller uses", clients, callers)
		}
		key := [2]int64{clients, callers}
		if first, dup := seen[key]; dup {
			return nil, posErr(r.line, 1, "%d clients at %d goroutines again (first on line %d)", clients, callers, first)
		}
		seen[key] = r.line
		rec := base(o)
		rec.Spec.Target = or(o.Target, "Go gRPC gateway (published)")
		rec.Spec.Inflight = int(callers)
		if clients > 1 {
			rec.Spec.ConnMode, rec.Spec.ConnsRequested, rec.Spec.Pick = "pool", int(clients), "round-robin"
		}
		rec.Env = result.Env{Language: "go", GRPCImpl: "grpc-go", RuntimeVersion: "gateway write-up's client"}
		rec.Requests = requests
		rec.ThroughputRPS = qps
		rec.DurationNS = int64(math.Round(float64(requests) / qps * 1e9))
		recs = append(recs, rec)
	}
	return recs, nil
}
