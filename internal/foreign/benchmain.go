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
	"time"
	"unicode/utf8"

	"github.com/rpclab/rpclab/internal/result"
)

var (
	// The features line: "Unary-networkMode_Local-...-benchTime_10s-...-maxConcurrentCalls_8-reqSize_1B-...-connections_1-...:".
	bmFeatures = regexp.MustCompile(`^(Unary|Stream|Unconstrained)-(.*):\s*$`)
	bmVersion  = regexp.MustCompile(`^(go[0-9][^/]*)/grpc(\S+)$`)
	bmLatency  = regexp.MustCompile(`(50|90|99|Avg)_Latency: ([^\s]+?)\s*(ns|µs|μs|us|ms|s)(?:\s|$)`)
	bmRequests = regexp.MustCompile(`Number of requests:\s+(\d+)`)
)

// feature reads "name_value" out of benchmain's features line.
func feature(line, name string) (string, bool) {
	m := regexp.MustCompile(`(?:^|-)` + name + `_([^-]+(?:-1)?)(?:-|$)`).FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ParseBenchmain reads grpc-go's benchmark/benchmain output: each run's
// block (its "go.../grpc..." line, its features line, its latency line,
// its histogram, its request count) becomes one record. In-flight is
// maxConcurrentCalls times connections (benchmain runs that many callers
// per connection), throughput the requests over benchTime; benchmain
// prints P50, P90, P99 and the average, not P99.9 or the extremes. Its
// client and server share one process (bufconn or loopback), which the
// target says. Unconstrained runs (no latency) are refused.
func ParseBenchmain(data []byte, o Options) ([]result.Record, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var recs []result.Record
	var cur *result.Record
	var curLine int
	goVer, grpcVer := "", ""
	line := 0
	finish := func() error {
		if cur == nil {
			return nil
		}
		if err := completeBenchmainRun(cur, curLine); err != nil {
			return err
		}
		recs = append(recs, *cur)
		cur = nil
		return nil
	}
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if m := bmVersion.FindStringSubmatch(t); m != nil {
			goVer, grpcVer = m[1], m[2]
			continue
		}
		if m := bmFeatures.FindStringSubmatch(t); m != nil {
			if err := finish(); err != nil {
				return nil, err
			}
			r, err := benchmainRun(m[1], m[2], line, o)
			if err != nil {
				return nil, err
			}
			r.Env = result.Env{Language: "go", GRPCImpl: "grpc-go", GRPCVersion: grpcVer, RuntimeVersion: goVer}
			cur, curLine = r, line
			continue
		}
		if cur == nil {
			continue
		}
		if err := readBenchmainLine(cur, t, line); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %v", ErrBadInput, line+1, err)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: no benchmain run (a Unary-... or Stream-... features line) found", ErrBadInput)
	}
	return recs, nil
}

// completeBenchmainRun checks that the run begun at line has latencies in
// order and a request count, and sets its throughput.
func completeBenchmainRun(cur *result.Record, line int) error {
	if cur.Requests <= 0 || cur.Latency.P50NS <= 0 {
		return fmt.Errorf("%w: line %d: benchmain run without latencies or a request count", ErrBadInput, line)
	}
	if l := cur.Latency; l.P90NS < l.P50NS || l.P99NS < l.P90NS {
		return fmt.Errorf("%w: line %d: benchmain run's 50, 90 and 99_Latency out of order (%d, %d, %d ns) or missing", ErrBadInput, line, l.P50NS, l.P90NS, l.P99NS)
	}
	cur.ThroughputRPS = float64(cur.Requests) / time.Duration(cur.DurationNS).Seconds()
	return nil
}

// benchmainRun begins the record of the run whose features line (at line)
// has the given kind (Unary, Stream or Unconstrained) and features.
func benchmainRun(kind, features string, line int, o Options) (*result.Record, error) {
	if kind == "Unconstrained" {
		return nil, fmt.Errorf("%w: line %d: an Unconstrained benchmain run has no latencies to import", ErrBadInput, line)
	}
	r := base(o)
	r.Spec.Target = or(o.Target, "benchmain (client and server in one process)")
	if kind == "Stream" {
		r.Spec.RPC = "streaming"
	}
	bt, ok := feature(features, "benchTime")
	d, err := time.ParseDuration(bt)
	if !ok || err != nil || d <= 0 {
		return nil, fmt.Errorf("%w: line %d: no benchTime_<duration> in the features", ErrBadInput, line)
	}
	calls, err1 := intFeature(features, "maxConcurrentCalls")
	conns, err2 := intFeature(features, "connections")
	if err1 != nil || calls < 1 {
		return nil, fmt.Errorf("%w: line %d: no maxConcurrentCalls_<n> of 1 or more in the features", ErrBadInput, line)
	}
	if err2 != nil || conns < 1 {
		conns = 1
	}
	if req, err := intFeature(features, "reqSize"); err == nil {
		r.Spec.PayloadBytes = req
	}
	r.Spec.Inflight = calls * conns
	if conns > 1 {
		r.Spec.ConnMode, r.Spec.ConnsRequested, r.Spec.Pick = "pool", conns, "round-robin"
	}
	r.Spec.IntervalNS, r.DurationNS = int64(d), int64(d)
	return &r, nil
}

// readBenchmainLine reads the latencies and the request count that line t
// (at line) of a run's block holds, if any, into cur.
func readBenchmainLine(cur *result.Record, t string, line int) error {
	for _, m := range bmLatency.FindAllStringSubmatch(t, -1) {
		x, err := strconv.ParseFloat(m[2], 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x*unitNS(m[3]) > maxValue*1e3 {
			return fmt.Errorf("%w: line %d, column %d: %s_Latency %q is not a latency", ErrBadInput, line, utf8.RuneCountInString(t[:strings.Index(t, m[0])])+1, m[1], m[2]+m[3])
		}
		ns := int64(x * unitNS(m[3]))
		switch m[1] {
		case "50":
			cur.Latency.P50NS = ns
		case "90":
			cur.Latency.P90NS = ns
		case "99":
			cur.Latency.P99NS = ns
		case "Avg":
			cur.Latency.MeanNS = float64(ns)
		}
	}
	if m := bmRequests.FindStringSubmatch(t); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return fmt.Errorf("%w: line %d: number of requests %q", ErrBadInput, line, m[1])
		}
		cur.Requests = n
	}
	return nil
}

func intFeature(line, name string) (int, error) {
	v, ok := feature(line, name)
	if !ok {
		return 0, fmt.Errorf("no %s", name)
	}
	return strconv.Atoi(strings.TrimSuffix(v, "B"))
}

func unitNS(u string) float64 {
	switch u {
	case "ns":
		return 1
	case "µs", "μs", "us":
		return 1e3
	case "ms":
		return 1e6
	}
	return 1e9
}
