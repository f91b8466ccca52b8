// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package foreign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

// ghzReport is the part of ghz's JSON report (runner.Report) read here:
// durations are nanoseconds.
type ghzReport struct {
	Date    string `json:"date"`
	Count   int64  `json:"count"`
	Total   int64  `json:"total"`
	Average int64  `json:"average"`
	Fastest int64  `json:"fastest"`
	Slowest int64  `json:"slowest"`
	Options struct {
		Host        string `json:"host"`
		Call        string `json:"call"`
		Concurrency int    `json:"concurrency"`
		Connections int    `json:"connections"`
		CPUs        int    `json:"CPUs"`
	} `json:"options"`
	StatusCodeDist      map[string]int64 `json:"statusCodeDistribution"`
	LatencyDistribution []struct {
		Percentage int   `json:"percentage"`
		Latency    int64 `json:"latency"`
	} `json:"latencyDistribution"`
}

// ParseGhz reads ghz JSON reports, one record each: a file may hold
// several concatenated (ghz run in a loop, >> into one file), and every
// one is read, in order; an error names the report (1-based) it is in. In
// each, in-flight is ghz's concurrency, the layout its connections (shared
// for one, else a pool that ghz fills round-robin), throughput its OK
// responses over its total time, latency its percentiles (ghz gives no
// P99.9: left 0), its fastest and slowest as min and max. ghz keeps no
// histogram rpclab can merge. A report whose status codes count more calls
// than it made is refused.
func ParseGhz(data []byte, o Options) ([]result.Record, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var recs []result.Record
	for n := 1; ; n++ {
		var g ghzReport
		if err := dec.Decode(&g); err == io.EOF && n > 1 {
			return recs, nil
		} else if err != nil {
			return nil, fmt.Errorf("%w: ghz JSON report %d: %v", ErrBadInput, n, err)
		}
		r, err := ghzRecord(g, o)
		if err != nil {
			return nil, fmt.Errorf("%w: ghz JSON report %d: %v", ErrBadInput, n, err)
		}
		recs = append(recs, r)
	}
}

// ghzRecord is the record of one ghz report.
func ghzRecord(g ghzReport, o Options) (result.Record, error) {
	if g.Count <= 0 || g.Total <= 0 {
		return result.Record{}, fmt.Errorf("count %d over total %d ns: no calls to import", g.Count, g.Total)
	}
	// ghz opens at least one connection and refuses more than its
	// concurrency (0: a report from before ghz wrote the field); no run
	// holds more than result.MaxInflight calls in flight.
	var bad []string
	if c := g.Options.Concurrency; c < 1 || c > result.MaxInflight {
		bad = append(bad, fmt.Sprintf("options.concurrency %d: want 1 to %d", c, result.MaxInflight))
	}
	if c := g.Options.Connections; c < 0 || c > max(g.Options.Concurrency, 1) {
		bad = append(bad, fmt.Sprintf("options.connections %d: want 1 to options.concurrency (%d), or 0 for not given", c, g.Options.Concurrency))
	}
	if c := g.Options.CPUs; c < 0 || c > result.MaxCPUs {
		bad = append(bad, fmt.Sprintf("options.CPUs %d: want 0 to %d", c, result.MaxCPUs))
	}
	if len(bad) > 0 {
		return result.Record{}, errors.New(strings.Join(bad, "; "))
	}
	r := base(o)
	r.Spec.Target = or(g.Options.Host, r.Spec.Target)
	r.Spec.Inflight = g.Options.Concurrency
	r.Spec.Call = g.Options.Call
	if c := g.Options.Connections; c > 1 {
		r.Spec.ConnMode, r.Spec.ConnsRequested, r.Spec.Pick = "pool", c, "round-robin"
	}
	r.Env = result.Env{Language: "go", GRPCImpl: "grpc-go", RuntimeVersion: "ghz", HostCPUs: g.Options.CPUs}
	if t, err := time.Parse(time.RFC3339, g.Date); err == nil {
		r.StartedAt = t.UTC()
	}
	ok, coded := g.Count, int64(0)
	for code, n := range g.StatusCodeDist {
		if n < 0 || n > g.Count {
			return result.Record{}, fmt.Errorf("statusCodeDistribution %s is %d of %d calls", code, n, g.Count)
		}
		if coded += n; coded > g.Count {
			return result.Record{}, fmt.Errorf("statusCodeDistribution counts more calls than count %d", g.Count)
		}
		if code != "OK" {
			r.Errors[code] = n
			ok -= n
		}
	}
	if ok <= 0 {
		r.Status = result.StatusFailed
		r.Error = "ghz: no call returned OK"
		ok = 0
	}
	r.Requests, r.DurationNS = g.Count, g.Total
	r.ThroughputRPS = float64(ok) / time.Duration(g.Total).Seconds()
	r.Latency.MinNS, r.Latency.MeanNS, r.Latency.P100NS = g.Fastest, float64(g.Average), g.Slowest
	for _, d := range g.LatencyDistribution {
		switch d.Percentage {
		case 50:
			r.Latency.P50NS = d.Latency
		case 90:
			r.Latency.P90NS = d.Latency
		case 99:
			r.Latency.P99NS = d.Latency
		}
	}
	if r.Status == result.StatusOK && (r.Latency.P50NS <= 0 || r.Latency.P99NS < r.Latency.P50NS) {
		return result.Record{}, fmt.Errorf("latencyDistribution lacks a P50 and P99 in order")
	}
	return r, nil
}
