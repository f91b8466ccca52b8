// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/rpclab/rpclab/internal/report"
)

// Load reads results files of any kind; each kind present is a Section
// with its table and its charts.
func ExampleLoad() {
	res, warnings, err := report.Load(context.Background(), []string{"testdata/healthy.jsonl", "testdata/flow.jsonl"})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(warnings), "warnings")
	for _, s := range res.Sections() {
		fmt.Printf("%s: %d charts\n", s.Kind(), len(s.Charts()))
	}
	// Output:
	// 0 warnings
	// ping: 4 charts
	// flow: 1 charts
}

// Table prints the step table that rpclab sweep prints: one line per
// record, with the ideal line and the efficiency derived from the
// in-flight-1 step.
func ExampleTable() {
	res, _, err := report.Load(context.Background(), []string{"testdata/ydb-2025-single-connection.jsonl"})
	if err != nil {
		panic(err)
	}
	if err := report.Table(os.Stdout, res.Runs[0].Records[:3]); err != nil {
		panic(err)
	}
	// Output:
	// client    conn    rpc  inflight  throughput (req/s)  ideal (req/s)  efficiency %  P50 (µs)    P90    P99  P99.9   P100  errors  conns  cpu µs/rpc  other cpu %  status
	//      cpp  shared  unary         1               10435          10435           100      91.0   98.0  106.0  116.0  219.0       0      ?         0.0            -      ok
	//      cpp  shared  unary         2               17584          20870            84     100.0  131.0  235.0  273.0  372.0       0      ?         0.0            -      ok
	//      cpp  shared  unary         3               21754          31305            69     126.0  171.0  251.0  319.0  538.0       0      ?         0.0            -      ok
}

// HTML writes one self-contained page of every section: here two runs,
// of the same client and server, overlaid in every chart of their group.
func ExampleHTML() {
	res, warnings, err := report.Load(context.Background(), []string{"testdata/shared-bottleneck.jsonl", "testdata/healthy.jsonl"})
	if err != nil {
		panic(err)
	}
	var page bytes.Buffer
	if err := report.HTML(&page, res, warnings); err != nil {
		panic(err)
	}
	fmt.Println(regexp.MustCompile(`<title>.*</title>`).FindString(page.String()))
	fmt.Println(len(regexp.MustCompile(`<figure class="chart"`).FindAllString(page.String(), -1)), "charts")
	// Output:
	// <title>rpclab report: shared-bottleneck.jsonl vs healthy.jsonl</title>
	// 4 charts
}

// WritePNGs writes every chart of every section as a PNG file named after
// the chart.
func ExampleWritePNGs() {
	res, _, err := report.Load(context.Background(), []string{"testdata/flow.jsonl"})
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "rpclab-charts")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	paths, err := report.WritePNGs(dir, res)
	if err != nil {
		panic(err)
	}
	for _, p := range paths {
		fmt.Println(filepath.Base(p))
	}
	// Output:
	// flow-rtt64ms-1MB.png
}
