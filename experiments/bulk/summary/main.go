// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command summary prints the bulk study's figures from the
// records experiments/bulk/run.sh writes: for each run, and for plaintext and
// TLS apart, the median and range over the rounds of each transport's
// MB/s over TCP's (divided round by round, TCP over TLS being the
// reference of steps over TLS), of its CPU seconds per GiB (client plus
// server) and of that CPU over TCP's; then, from the allocation steps, the
// server's and the client's heap bytes allocated per MiB and the server's
// allocations per request at each size, so whether allocation is O(1) per
// request (bytes per MiB falling as the size grows) can be read.
//
//	go run ./experiments/bulk/summary DIR
//
// DIR holds one folder per run (run1, run2, ...); in each, every
// round*.jsonl file (at any depth) is one round and every alloc*.jsonl
// file holds allocation steps. Steps that are not ok are left out; a
// round without an ok tcp step of the same TLS, size, chunk and streams
// gives no ratio.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rpclab/rpclab/internal/report"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: go run ./experiments/bulk/summary DIR (DIR/run*/.../round*.jsonl and alloc*.jsonl, as experiments/bulk/run.sh writes)")
		return 2
	}
	runs, err := load(context.Background(), args[0])
	if err != nil {
		fmt.Fprintf(stderr, "bulkfix: %v\n", err)
		return 1
	}
	for _, r := range runs {
		r.print(stdout)
	}
	return 0
}

// errNoRuns: DIR has no run folder with records.
var errNoRuns = errors.New("no run*/ folder with round*.jsonl or alloc*.jsonl files")

// runRecords are one run's records: each round's, and the allocation steps.
type runRecords struct {
	name   string
	rounds [][]result.BulkRecord // one per round file, in name order
	alloc  []result.BulkRecord
}

// load reads every run folder of dir.
func load(ctx context.Context, dir string) ([]*runRecords, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var runs []*runRecords
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "run") {
			continue
		}
		r := &runRecords{name: e.Name()}
		var roundFiles, allocFiles []string
		err := filepath.WalkDir(filepath.Join(dir, e.Name()), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".jsonl") {
				return err
			}
			switch {
			case strings.HasPrefix(d.Name(), "round"):
				roundFiles = append(roundFiles, path)
			case strings.HasPrefix(d.Name(), "alloc"):
				allocFiles = append(allocFiles, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(roundFiles)
		slices.Sort(allocFiles)
		for _, f := range roundFiles {
			set, err := result.ReadAllFile(ctx, f)
			if err != nil {
				return nil, err
			}
			r.rounds = append(r.rounds, set.Bulk)
		}
		for _, f := range allocFiles {
			set, err := result.ReadAllFile(ctx, f)
			if err != nil {
				return nil, err
			}
			r.alloc = append(r.alloc, set.Bulk...)
		}
		if len(r.rounds)+len(r.alloc) > 0 {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, errNoRuns)
	}
	slices.SortFunc(runs, func(a, b *runRecords) int { return naturalCompare(a.name, b.name) })
	return runs, nil
}

// naturalCompare orders "run2" before "run10".
func naturalCompare(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// group is what a round compares transports within.
type group struct {
	tls     bool
	size    int64
	chunk   int
	streams int
}

func groupOf(r *result.BulkRecord) group {
	return group{r.Spec.TLS, r.Spec.SizeBytes, r.Spec.ChunkBytes, r.Spec.Streams}
}

func (g group) String() string {
	mode := "plaintext"
	if g.tls {
		mode = "TLS on every transport, tcp+tls the reference"
	}
	s := fmt.Sprintf("%s, %s per download, %s chunks", mode, result.FormatBytes(g.size), result.FormatBytes(int64(g.chunk)))
	if g.streams != 1 {
		s += fmt.Sprintf(", %d streams", g.streams)
	}
	return s
}

// row is one transport's figures over a run's rounds.
type row struct {
	label              string
	tput, cpu, cpuRel  []float64 // per round that had it: MB/s / tcp's, CPU s/GiB, CPU / tcp's
	mbps               []float64
	rounds, tcpMissing int
}

// cpuPerGiB is client plus server CPU seconds per GiB; -1 when the
// server's is unknown (a partial sum would flatter the transport).
func cpuPerGiB(r *result.BulkRecord) float64 {
	if r.ServerCPUSPerGiB < 0 {
		return -1
	}
	return r.ClientCPUSPerGiB + r.ServerCPUSPerGiB
}

// rounds turns a run's rounds into rows per group, in the order the groups
// and transports first appear.
func rounds(rs [][]result.BulkRecord) (groups []group, rows map[group][]*row) {
	rows = map[group][]*row{}
	find := func(g group, label string) *row {
		for _, r := range rows[g] {
			if r.label == label {
				return r
			}
		}
		if rows[g] == nil {
			groups = append(groups, g)
		}
		r := &row{label: label}
		rows[g] = append(rows[g], r)
		return r
	}
	for _, recs := range rs {
		tcp := map[group]*result.BulkRecord{}
		for i := range recs {
			if r := &recs[i]; r.Status == result.StatusOK && r.Spec.Transport == result.BulkTCP {
				tcp[groupOf(r)] = r
			}
		}
		for i := range recs {
			r := &recs[i]
			if r.Status != result.StatusOK {
				continue
			}
			w := find(groupOf(r), report.BulkLabel(r))
			w.rounds++
			w.mbps = append(w.mbps, r.ThroughputBytesPerS/1e6)
			c := cpuPerGiB(r)
			if c >= 0 {
				w.cpu = append(w.cpu, c)
			}
			t := tcp[groupOf(r)]
			if t == nil || t.ThroughputBytesPerS <= 0 {
				w.tcpMissing++
				continue
			}
			w.tput = append(w.tput, r.ThroughputBytesPerS/t.ThroughputBytesPerS)
			if tc := cpuPerGiB(t); c >= 0 && tc > 0 {
				w.cpuRel = append(w.cpuRel, c/tc)
			}
		}
	}
	return groups, rows
}

// spread formats the median and the range of v with prec decimals:
// "0.85 (0.81-0.90)", "0.85" for one value, "-" for none.
func spread(v []float64, prec int) string {
	m, ok := stats.Median(v)
	if !ok {
		return "-"
	}
	if len(v) == 1 {
		return fmt.Sprintf("%.*f", prec, m)
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)", prec, m, prec, slices.Min(v), prec, slices.Max(v))
}

func (r *runRecords) print(w io.Writer) {
	fmt.Fprintf(w, "== %s (%d round files; the rounds column counts each transport's)\n", r.name, len(r.rounds))
	groups, rows := rounds(r.rounds)
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s: median (range) over the rounds\n", g)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "transport\trounds\tMB/s\tMB/s x tcp\tCPU s/GiB (client+server)\tCPU x tcp\t")
		for _, row := range rows[g] {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", row.label, row.rounds, spread(row.mbps, 0), spread(row.tput, 2),
				spread(row.cpu, 3), spread(row.cpuRel, 2))
		}
		tw.Flush()
	}
	if len(r.alloc) > 0 {
		printAlloc(w, r.alloc)
	}
	fmt.Fprintln(w)
}

// allocKey is a line of the allocation table.
type allocKey struct {
	label   string
	chunk   int
	streams int
}

// printAlloc writes, per transport, chunk and streams, the heap bytes
// allocated per MiB at each size (server, client) and the server's
// allocations per request: O(1) per request shows as bytes per MiB
// falling as the size grows, O(N) as a flat line.
func printAlloc(w io.Writer, recs []result.BulkRecord) {
	var sizes []int64
	var keys []allocKey
	cells := map[allocKey]map[int64]*result.BulkRecord{}
	for i := range recs {
		r := &recs[i]
		if r.Status != result.StatusOK {
			continue
		}
		k := allocKey{report.BulkLabel(r), r.Spec.ChunkBytes, r.Spec.Streams}
		if cells[k] == nil {
			cells[k] = map[int64]*result.BulkRecord{}
			keys = append(keys, k)
		}
		cells[k][r.Spec.SizeBytes] = r
		if !slices.Contains(sizes, r.Spec.SizeBytes) {
			sizes = append(sizes, r.Spec.SizeBytes)
		}
	}
	slices.Sort(sizes)
	for _, part := range []struct {
		title string
		value func(*result.BulkRecord) string
	}{
		{"server heap bytes allocated per MiB", func(r *result.BulkRecord) string { return known(r.ServerAllocBytesPerMiB, 0) }},
		{"client heap bytes allocated per MiB", func(r *result.BulkRecord) string { return known(r.ClientAllocBytesPerMiB, 0) }},
		{"server allocations per request", func(r *result.BulkRecord) string { return known(r.ServerAllocsPerRequest, 0) }},
	} {
		fmt.Fprintf(w, "\nallocation by download size: %s\n", part.title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "transport\tchunk\tstreams\t")
		for _, s := range sizes {
			fmt.Fprintf(tw, "%s\t", result.FormatBytes(s))
		}
		fmt.Fprintln(tw)
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%d\t", k.label, result.FormatBytes(int64(k.chunk)), k.streams)
			for _, s := range sizes {
				if r := cells[k][s]; r != nil {
					fmt.Fprintf(tw, "%s\t", part.value(r))
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// known formats v, or "-" when it is unknown (negative).
func known(v float64, prec int) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}
