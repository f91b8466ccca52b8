// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/verdict"
)

// bestRow is one (series, in-flight) position of a --best table: the
// candidate layout's median throughput and client CPU per RPC over the
// repeats, against the layout whose median throughput was the highest
// among the others.
type bestRow struct {
	series           string
	inflight         int
	n                int // repeats with an ok step of the candidate
	rps, cpu         float64
	best             string
	bestRPS, bestCPU float64
	bestN            int
}

// median of xs (which it sorts); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}

// compareBest treats every file as a repeat of one run: at each in-flight
// count it takes each layout's median throughput and median client CPU per
// RPC over the repeats, and sets the candidate layout beside the best of
// the others (a layout label starting with candidate counts as it, so
// "pool:auto" matches "pool:auto:1:8").
func compareBest(repeats [][]result.Record, candidate string) ([]bestRow, error) {
	type key struct {
		series, layout string
		inflight       int
	}
	rps, cpu := map[key][]float64{}, map[key][]float64{}
	for _, recs := range repeats {
		for i := range recs {
			r := &recs[i]
			if r.Status != result.StatusOK {
				continue
			}
			k := key{series(r), verdict.ConnLabel(r), r.Spec.Inflight}
			rps[k] = append(rps[k], r.ThroughputRPS)
			cpu[k] = append(cpu[k], r.ClientCPUNSPerRPC/1e3)
		}
	}
	rows := map[[2]string]*bestRow{}
	var out []*bestRow
	for k := range rps {
		pos := [2]string{k.series, strconv.Itoa(k.inflight)}
		row := rows[pos]
		if row == nil {
			row = &bestRow{series: k.series, inflight: k.inflight}
			rows[pos] = row
			out = append(out, row)
		}
		m, c := median(slices.Clone(rps[k])), median(slices.Clone(cpu[k]))
		if strings.HasPrefix(k.layout, candidate) {
			row.n, row.rps, row.cpu = len(rps[k]), m, c
		} else if m > row.bestRPS {
			row.best, row.bestRPS, row.bestCPU, row.bestN = k.layout, m, c, len(rps[k])
		}
	}
	var res []bestRow
	for _, r := range out {
		if r.n > 0 && r.bestRPS > 0 {
			res = append(res, *r)
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("%w %q beside another layout", errNoBase, candidate)
	}
	slices.SortFunc(res, func(a, b bestRow) int {
		if c := strings.Compare(a.series, b.series); c != 0 {
			return c
		}
		return a.inflight - b.inflight
	})
	return res, nil
}

func printBest(w io.Writer, rows []bestRow, candidate string) {
	last := ""
	var tw *tabwriter.Writer
	for _, r := range rows {
		if r.series != last {
			if tw != nil {
				tw.Flush()
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s: %s against the best other layout, medians over the repeats\n", r.series, candidate)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "inflight\t%s req/s\tcpu µs/rpc\tbest other\treq/s\tcpu µs/rpc\tthroughput x\tcpu x\trepeats\n", candidate)
			last = r.series
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%.1f\t%s\t%.0f\t%.1f\t%.2f\t%.2f\t%d/%d\n", r.inflight, r.rps, r.cpu, r.best,
			r.bestRPS, r.bestCPU, r.rps/r.bestRPS, r.cpu/r.bestCPU, r.n, r.bestN)
	}
	if tw != nil {
		tw.Flush()
	}
}
