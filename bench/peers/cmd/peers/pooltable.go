// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// benchLine is one result line of `go test -bench` for BenchmarkPools or
// BenchmarkPick: conns, parallel and peer come from the sub-benchmark name.
type benchLine struct {
	bench, conns, parallel, peer string
	metrics                      map[string]float64
}

// parseBenchLine reads a line such as
// "BenchmarkPools/conns=2/parallel=8/peer=rpclab-pool-2  1000  5000 ns/op  1.2e5 rpc/s  8.00 goroutines  900 B/op  17 allocs/op".
func parseBenchLine(l string) (benchLine, bool) {
	f := strings.Fields(l)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return benchLine{}, false
	}
	b := benchLine{metrics: map[string]float64{}}
	parts := strings.Split(f[0], "/")
	b.bench = parts[0]
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "conns":
			b.conns = v
		case "parallel":
			b.parallel = v
		case "peer":
			// go test appends "-GOMAXPROCS" to the last element.
			if i := strings.LastIndexByte(v, '-'); i > 0 {
				if _, err := strconv.Atoi(v[i+1:]); err == nil {
					v = v[:i]
				}
			}
			b.peer = v
		}
	}
	if b.peer == "" {
		return benchLine{}, false
	}
	for i := 2; i+1 < len(f); i += 2 {
		x, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return benchLine{}, false
		}
		b.metrics[f[i+1]] = x
	}
	return b, true
}

// runPoolTable reads `go test -bench` output and prints one table with
// each figure's ratio to rpclab's pool in the same cell. Lines it does not
// recognise (skips, failures) are passed through below the table.
func runPoolTable(in io.Reader, out io.Writer) error {
	var lines []benchLine
	var other []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if b, ok := parseBenchLine(sc.Text()); ok {
			lines = append(lines, b)
			continue
		}
		if t := strings.TrimSpace(sc.Text()); strings.Contains(t, "SKIP") || strings.Contains(t, "FAIL") || strings.Contains(t, "Error") || strings.HasPrefix(t, "---") || strings.Contains(t, ".go:") {
			other = append(other, t)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(lines) == 0 {
		return fmt.Errorf("pooltable: no benchmark line in the input")
	}
	fmt.Fprintln(out, "pools: unary pings from `parallel` goroutines through each peer, real rpclab server on loopback")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "bench\tconns\tparallel\tpeer\trpc/s\tns/op\tallocs/op\tB/op\trpclab/x rpc/s\trpclab/x allocs\t")
	base := map[string]benchLine{}
	for _, b := range lines {
		if b.peer == "rpclab-pool" {
			base[b.bench+"/"+b.conns+"/"+b.parallel] = b
		}
	}
	prev := ""
	for _, b := range lines {
		cell := b.bench + "/" + b.conns + "/" + b.parallel
		if prev != "" && cell != prev {
			fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t")
		}
		prev = cell
		r1, r2 := "-", "-"
		if bl, ok := base[cell]; ok {
			r1 = ratioF(bl.metrics["rpc/s"], b.metrics["rpc/s"])
			r2 = ratioF(bl.metrics["allocs/op"], b.metrics["allocs/op"])
		}
		// The fixed peers hold their own count whatever the cell's.
		held := b.conns
		switch b.peer {
		case "bare-conn":
			held = "1"
		case "per-goroutine":
			held = b.parallel
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", strings.TrimPrefix(b.bench, "Benchmark"), held, b.parallel, b.peer,
			metric(b, "rpc/s", 0), metric(b, "ns/op", 1), metric(b, "allocs/op", 1), metric(b, "B/op", 0), r1, r2)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, o := range other {
		fmt.Fprintln(out, o)
	}
	return nil
}

func metric(b benchLine, name string, prec int) string {
	v, ok := b.metrics[name]
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func ratioF(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}
