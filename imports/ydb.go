// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package imports

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/result"
)

const ydbHeader = "inflight,throughput,p50,p90,p99,p99_9,p100"

// maxValue bounds every figure of a YDB CSV row: 1e12 µs is 11 days, far
// past any RPC, and stays inside int64 nanoseconds.
const maxValue = 1e12

// ParseYDBCSV reads YDB's CSV: the header, then one row per in-flight
// count (throughput in RPCs per second, latencies in µs). In a whole output
// of YDB's client the CSV starts after "CSV Results:"; it ends at the first
// blank line after its rows. Every row becomes a record of layout
// o.ConnMode (default shared) and kind o.RPC (default unary), service
// ydb-debug (YDB's client pings Ydb.Debug.V1.DebugService). A wrong
// header, a short or long row, a value that is not a number (or negative,
// or an in-flight count below 1) is an error naming its line.
func ParseYDBCSV(data []byte, o Options) ([]result.Record, error) {
	rpc := or(o.RPC, "unary")
	if rpc != "unary" && rpc != "streaming" {
		return nil, fmt.Errorf("%w: rpc %q: want unary or streaming", ErrBadInput, rpc)
	}
	mode := or(o.ConnMode, "shared")
	if mode != "shared" && mode != "local-pool" && mode != "channel-per-worker" {
		return nil, fmt.Errorf("%w: conn mode %q: YDB's client runs shared (its default), channel-per-worker or local-pool", ErrBadInput, mode)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	// Find the header: the first non-blank line, or the one after "CSV
	// Results:" when the client's whole output was given.
	whole := bytes.Contains(data, []byte("CSV Results:"))
	found := false
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if whole {
			if t == "CSV Results:" {
				whole = false
			}
			continue
		}
		if t == "" {
			continue
		}
		if t != ydbHeader {
			return nil, fmt.Errorf("%w: line %d: want YDB's CSV header %q, got %q", ErrBadInput, line, ydbHeader, t)
		}
		found = true
		break
	}
	if !found {
		return nil, fmt.Errorf("%w: no YDB CSV header %q", ErrBadInput, ydbHeader)
	}
	var recs []result.Record
	seen := map[int]int{}
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			if len(recs) > 0 {
				break
			}
			continue
		}
		f := strings.Split(t, ",")
		if len(f) != 7 {
			return nil, fmt.Errorf("%w: line %d: want 7 fields (%s), got %d: %q", ErrBadInput, line, ydbHeader, len(f), t)
		}
		names := strings.Split(ydbHeader, ",")
		v := make([]float64, 7)
		for i, s := range f {
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return nil, fmt.Errorf("%w: line %d: %s %q is not a number of 0 or more", ErrBadInput, line, names[i], s)
			}
			if x > maxValue {
				return nil, fmt.Errorf("%w: line %d: %s %q is above %g, no step's figure", ErrBadInput, line, names[i], s, float64(maxValue))
			}
			v[i] = x
		}
		n := int(v[0])
		if float64(n) != v[0] || n < 1 || n > 1<<20 {
			return nil, fmt.Errorf("%w: line %d: inflight %q is not a count of 1 or more", ErrBadInput, line, f[0])
		}
		if prev, dup := seen[n]; dup {
			return nil, fmt.Errorf("%w: line %d: inflight %d again (first on line %d)", ErrBadInput, line, n, prev)
		}
		seen[n] = line
		for i := 3; i < 7; i++ {
			if v[i] < v[i-1] {
				return nil, fmt.Errorf("%w: line %d: %s %s µs is below %s %s µs", ErrBadInput, line, names[i], f[i], names[i-1], f[i-1])
			}
		}
		r := base(o)
		r.Spec.RPC, r.Spec.ConnMode, r.Spec.Inflight = rpc, mode, n
		r.Spec.Service = "ydb-debug" // YDB's client pings Ydb.Debug.V1.DebugService
		if mode != "shared" {
			r.Spec.ConnsRequested = n
		}
		r.Env = result.Env{Language: "cpp", GRPCImpl: "grpc-c++", RuntimeVersion: "YDB grpc_ping_client"}
		r.ThroughputRPS = v[1]
		us := func(x float64) int64 { return int64(math.Round(x * 1e3)) }
		r.Latency.P50NS, r.Latency.P90NS, r.Latency.P99NS, r.Latency.P999NS, r.Latency.P100NS = us(v[2]), us(v[3]), us(v[4]), us(v[5]), us(v[6])
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %v", ErrBadInput, line+1, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: the YDB CSV has a header but no rows", ErrBadInput)
	}
	return recs, nil
}
