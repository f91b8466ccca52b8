// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package foreign

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
)

const ydbHeader = "inflight,throughput,p50,p90,p99,p99_9,p100"

// maxValue bounds every figure of a YDB CSV row: 1e12 µs is 11 days, far
// past any RPC, and stays inside int64 nanoseconds.
const maxValue = 1e12

// YDB's client prints, per step and before its tables (grpc_ping_client's
// RunBenchmark and PrintStats): "Running benchmark with N concurrent
// requests using M channels...", then "Total requests: X" and "Total
// time: Y us".
var (
	ydbRunning  = regexp.MustCompile(`^Running benchmark with (\d+) concurrent requests using (\d+) channels\.\.\.$`)
	ydbRequests = regexp.MustCompile(`^Total requests: (\d+)$`)
	ydbTime     = regexp.MustCompile(`^Total time: (\d+) us$`)
)

// ydbStep is one step's block of YDB's whole output.
type ydbStep struct {
	line     int // of its "Running benchmark" line
	channels int
	requests int64 // -1 until its "Total requests:" line
	totalUS  int64 // -1 until its "Total time:" line
}

// ParseYDBCSV reads YDB's CSV: the header, then one row per in-flight
// count (throughput in RPCs per second, latencies in µs). Given the
// client's whole output (its "TCP_NODELAY is ..." line, a block per step,
// its summary table, then "CSV Results:" and the CSV), it also reads each
// step's block: the channels it used, its request count and its time. A
// step on one channel is labelled shared; on more, channel-per-worker
// (YDB's default: channels with identical arguments, one connection), or
// local-pool with o.ConnMode "local-pool" (the client's --local-pool,
// which its output does not print): what rpclab's C++ client in YDB mode
// records for the same command, so the two overlay as one layout. A bare
// CSV (the post's table) says no channels: its rows are shared (one
// connection, as the post's lsof saw), or o.ConnMode with in-flight
// connections requested. Service ydb-debug (YDB's client pings
// Ydb.Debug.V1.DebugService). A wrong header, a short or long row, a value
// that is not a number (or negative, or an in-flight count below 1),
// percentiles out of order or a row without its step's block is an error
// naming its line and column.
func ParseYDBCSV(data []byte, o Options) ([]result.Record, error) {
	rpc := or(o.RPC, "unary")
	if rpc != "unary" && rpc != "streaming" {
		return nil, fmt.Errorf("%w: rpc %q: want unary or streaming", ErrBadInput, rpc)
	}
	mode := o.ConnMode
	if mode != "" && mode != "shared" && mode != "local-pool" && mode != "channel-per-worker" {
		return nil, fmt.Errorf("%w: conn mode %q: YDB's client runs shared (one channel), channel-per-worker (its default) or local-pool", ErrBadInput, mode)
	}
	steps, csvLine, whole, err := ydbSteps(data)
	if err != nil {
		return nil, err
	}
	t, err := readTableFrom(data, ydbHeader, csvLine, whole)
	if err != nil {
		return nil, err
	}
	var recs []result.Record
	seen := map[int]int{}
	for _, r := range t.rows {
		n64, err := t.count(r, 0, 1, 1<<20)
		if err != nil {
			return nil, err
		}
		n := int(n64)
		if prev, dup := seen[n]; dup {
			return nil, posErr(r.line, 1, "inflight %d again (first on line %d)", n, prev)
		}
		seen[n] = r.line
		v := make([]float64, 7)
		for i := 1; i < 7; i++ {
			if v[i], err = t.num(r, i, 0, maxValue); err != nil {
				return nil, err
			}
		}
		for i := 3; i < 7; i++ {
			if v[i] < v[i-1] {
				return nil, posErr(r.line, i+1, "%s %s µs is below %s %s µs", t.header[i], r.fields[i], t.header[i-1], r.fields[i-1])
			}
		}
		rec := base(o)
		rec.Spec.RPC, rec.Spec.Inflight = rpc, n
		rec.Spec.Service = "ydb-debug" // YDB's client pings Ydb.Debug.V1.DebugService
		channels := n
		if whole {
			st, ok := steps[n]
			if !ok {
				return nil, posErr(r.line, 1, "in-flight %d has no \"Running benchmark with %d concurrent requests\" block before the tables", n, n)
			}
			channels = st.channels
			rec.Requests, rec.DurationNS = st.requests, st.totalUS*1000
			if channels > 1 && mode == "shared" {
				return nil, posErr(st.line, 1, "in-flight %d used %d channels: channel-per-worker or local-pool, not shared", n, channels)
			}
		}
		switch {
		case channels == 1 || (!whole && (mode == "" || mode == "shared")):
			rec.Spec.ConnMode, rec.Spec.ConnsRequested = "shared", 1
		case mode == "local-pool":
			rec.Spec.ConnMode, rec.Spec.ConnsRequested = "local-pool", channels
		default:
			rec.Spec.ConnMode, rec.Spec.ConnsRequested = "channel-per-worker", channels
		}
		rec.Env = result.Env{Language: "cpp", GRPCImpl: "grpc-c++", RuntimeVersion: "YDB grpc_ping_client"}
		rec.ThroughputRPS = v[1]
		us := func(x float64) int64 { return int64(math.Round(x * 1e3)) }
		rec.Latency.P50NS, rec.Latency.P90NS, rec.Latency.P99NS, rec.Latency.P999NS, rec.Latency.P100NS = us(v[2]), us(v[3]), us(v[4]), us(v[5]), us(v[6])
		recs = append(recs, rec)
	}
	return recs, nil
}

// ydbSteps reads the step blocks of YDB's whole output, up to its "CSV
// Results:" line (csvLine); whole is false for a bare CSV (no block, no
// such line), which starts at line 1.
func ydbSteps(data []byte) (steps map[int]*ydbStep, csvLine int, whole bool, err error) {
	if !bytes.Contains(data, []byte("CSV Results:")) && !bytes.Contains(data, []byte("Running benchmark with ")) {
		return nil, 0, false, nil
	}
	steps = map[int]*ydbStep{}
	var cur *ydbStep
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "CSV Results:" {
			for n, st := range steps {
				if st.requests < 0 || st.totalUS < 0 {
					return nil, 0, false, posErr(st.line, 1, "the step at in-flight %d has no \"Total requests:\" and \"Total time:\" lines", n)
				}
			}
			return steps, line, true, nil
		}
		if m := ydbRunning.FindStringSubmatch(t); m != nil {
			n, err1 := strconv.Atoi(m[1])
			ch, err2 := strconv.Atoi(m[2])
			if err1 != nil || err2 != nil || n < 1 || ch < 1 || ch > n {
				return nil, 0, false, posErr(line, 1, "%q: want in-flight 1 or more on 1 to in-flight channels", t)
			}
			if prev, dup := steps[n]; dup {
				return nil, 0, false, posErr(line, 1, "in-flight %d run again (first on line %d)", n, prev.line)
			}
			cur = &ydbStep{line: line, channels: ch, requests: -1, totalUS: -1}
			steps[n] = cur
			continue
		}
		if cur == nil {
			continue
		}
		if m := ydbRequests.FindStringSubmatch(t); m != nil {
			x, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil {
				return nil, 0, false, posErr(line, 17, "total requests %q is not a count", m[1])
			}
			cur.requests = x
		} else if m := ydbTime.FindStringSubmatch(t); m != nil {
			x, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil || x > maxValue {
				return nil, 0, false, posErr(line, 13, "total time %q µs is not a duration", m[1])
			}
			cur.totalUS = x
		}
	}
	if err := sc.Err(); err != nil {
		return nil, 0, false, posErr(line+1, 1, "%v", err)
	}
	return nil, 0, false, posErr(line+1, 1, "YDB's output has no \"CSV Results:\" line: run its client with --with-csv")
}
