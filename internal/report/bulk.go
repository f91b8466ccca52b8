// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/rpclab/rpclab/internal/result"
)

// bulkGroup keys the steps that are compared with each other: same target
// (an imported table's cells are targets of their own), size, chunk,
// streams and TLS (TCP over TLS is the reference of steps over TLS),
// different transports.
type bulkGroup struct {
	target  string
	size    int64
	chunk   int
	streams int
	tls     bool
}

func bulkGroupOf(r *result.BulkRecord) bulkGroup {
	return bulkGroup{r.Spec.Target, r.Spec.SizeBytes, r.Spec.ChunkBytes, r.Spec.Streams, r.Spec.TLS}
}

// BulkLabel names a record's transport as tables and charts show it: the
// transport, with "+tls" when it ran over TLS.
func BulkLabel(r *result.BulkRecord) string {
	if r.Spec.TLS {
		return r.Spec.Transport + "+tls"
	}
	return r.Spec.Transport
}

// BulkTable writes one row per bulk record (its transport as BulkLabel
// names it), with its throughput and CPU per GiB relative to the tcp step
// of the same target, size, chunk, streams and TLS ("x tcp"; "-" without
// one).
func BulkTable(w io.Writer, recs []result.BulkRecord) error {
	tcp := map[bulkGroup]*result.BulkRecord{}
	for i := range recs {
		r := &recs[i]
		if r.Spec.Transport == result.BulkTCP && r.Status == result.StatusOK {
			tcp[bulkGroupOf(r)] = r
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transport\tsize\tchunk\tstreams\tMB/s\tx tcp\tclient CPU s/GiB\tserver CPU s/GiB\tCPU x tcp\tsrv alloc B/MiB\tsrv allocs/req\tcli alloc B/MiB\tcli RSS MiB\tsrv RSS MiB\tstatus\t")
	for i := range recs {
		r := &recs[i]
		mbps, ratio, cpuRatio := "-", "-", "-"
		if r.Status == result.StatusOK {
			mbps = strconv.FormatFloat(r.ThroughputBytesPerS/1e6, 'f', 0, 64)
			if t := tcp[bulkGroupOf(r)]; t != nil && t.ThroughputBytesPerS > 0 {
				ratio = strconv.FormatFloat(r.ThroughputBytesPerS/t.ThroughputBytesPerS, 'f', 2, 64)
				if tc := bulkCPUPerGiB(t); tc > 0 && bulkCPUPerGiB(r) > 0 {
					cpuRatio = strconv.FormatFloat(bulkCPUPerGiB(r)/tc, 'f', 2, 64)
				}
			}
		}
		status := r.Status
		if r.Error != "" {
			status += ": " + r.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			BulkLabel(r), result.FormatBytes(r.Spec.SizeBytes), result.FormatBytes(int64(r.Spec.ChunkBytes)), r.Spec.Streams,
			mbps, ratio, bulkFixed(r.ClientCPUSPerGiB, 3), bulkKnown(r.ServerCPUSPerGiB, 3), cpuRatio,
			bulkKnown(r.ServerAllocBytesPerMiB, 0), bulkKnown(r.ServerAllocsPerRequest, 0), bulkFixed(r.ClientAllocBytesPerMiB, 0),
			bulkMiB(r.ClientPeakRSSBytes), bulkMiB(r.ServerPeakRSSBytes), status)
	}
	return tw.Flush()
}

// bulkCPUPerGiB is client plus server CPU seconds per GiB (client only when the
// server's is unknown).
func bulkCPUPerGiB(r *result.BulkRecord) float64 {
	c := r.ClientCPUSPerGiB
	if r.ServerCPUSPerGiB > 0 {
		c += r.ServerCPUSPerGiB
	}
	return c
}

func bulkFixed(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

func bulkKnown(v float64, prec int) string {
	if v < 0 {
		return "-"
	}
	return bulkFixed(v, prec)
}

func bulkMiB(b int64) string {
	if b < 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64)
}

// BulkSection shows bulk records (rpclab bulk): BulkTable, and the charts
// of bulkFigures.
type BulkSection struct {
	Records []result.BulkRecord
}

// Kind is result.KindBulk.
func (BulkSection) Kind() string { return result.KindBulk }

// Table writes BulkTable.
func (s BulkSection) Table(w io.Writer) error { return BulkTable(w, s.Records) }

// Charts returns the figures of bulkFigures named "<figure kind>-<n>", n
// counting the figures of that kind ("bulk-throughput-1").
func (s BulkSection) Charts() []Chart {
	var out []Chart
	n := map[string]int{}
	for _, f := range bulkFigures(s.Records) {
		n[f.Kind]++
		out = append(out, Chart{Name: fmt.Sprintf("%s-%d", f.Kind, n[f.Kind]), Figure: f})
	}
	return out
}

func (s BulkSection) html() (template.HTML, error) {
	return kindHTML(s, fmt.Sprintf("Bulk transfer (rpclab bulk): %d records", len(s.Records)),
		"One row per step; x tcp compares throughput and CPU per GiB with the tcp step of the same target, size, chunk, streams and TLS (docs/bulk.md).")
}

// bulkFigures charts bulk records: for each size and stream count,
// throughput and CPU (client plus server) per GiB against the chunk size,
// one line per transport (BulkLabel: "+tls" apart); and for each chunk and stream count, the
// server's heap bytes allocated per MiB against the download size, one line
// per transport (a line falling towards zero is memory O(1) per request).
// Only records with status ok are charted.
func bulkFigures(recs []result.BulkRecord) []Figure {
	type sizeKey struct {
		size    int64
		streams int
	}
	type chunkKey struct {
		chunk, streams int
	}
	var sizeKeys []sizeKey
	var chunkKeys []chunkKey
	seenS, seenC := map[sizeKey]bool{}, map[chunkKey]bool{}
	var transports []string
	seenT := map[string]bool{}
	for _, r := range recs {
		if r.Status != result.StatusOK {
			continue
		}
		sk, ck := sizeKey{r.Spec.SizeBytes, r.Spec.Streams}, chunkKey{r.Spec.ChunkBytes, r.Spec.Streams}
		if !seenS[sk] {
			seenS[sk] = true
			sizeKeys = append(sizeKeys, sk)
		}
		if !seenC[ck] {
			seenC[ck] = true
			chunkKeys = append(chunkKeys, ck)
		}
		if l := BulkLabel(&r); !seenT[l] {
			seenT[l] = true
			transports = append(transports, l)
		}
	}
	series := func(keep func(*result.BulkRecord) bool, x, y func(*result.BulkRecord) float64) []Series {
		var ss []Series
		for i, t := range transports {
			s := Series{Label: t, Color: i, Shape: i}
			for j := range recs {
				r := &recs[j]
				if r.Status == result.StatusOK && BulkLabel(r) == t && keep(r) {
					s.Points = append(s.Points, Point{X: x(r), Y: y(r)})
				}
			}
			if len(s.Points) > 0 {
				ss = append(ss, s)
			}
		}
		return ss
	}
	kib := func(r *result.BulkRecord) float64 { return float64(r.Spec.ChunkBytes) / (1 << 10) }
	var figs []Figure
	for _, k := range sizeKeys {
		keep := func(r *result.BulkRecord) bool { return r.Spec.SizeBytes == k.size && r.Spec.Streams == k.streams }
		where := fmt.Sprintf("%s per download, %d stream(s)", result.FormatBytes(k.size), k.streams)
		figs = append(figs,
			Figure{Kind: "bulk-throughput", Title: "Throughput, " + where, XLabel: "chunk (KiB)", YLabel: "MB/s",
				Series: series(keep, kib, func(r *result.BulkRecord) float64 { return r.ThroughputBytesPerS / 1e6 })},
			Figure{Kind: "bulk-cpu", Title: "CPU per GiB (client + server), " + where, XLabel: "chunk (KiB)", YLabel: "CPU s/GiB",
				Series: series(keep, kib, bulkCPUPerGiB)})
	}
	for _, k := range chunkKeys {
		keep := func(r *result.BulkRecord) bool {
			return r.Spec.ChunkBytes == k.chunk && r.Spec.Streams == k.streams && r.ServerAllocBytesPerMiB > 0
		}
		s := series(keep, func(r *result.BulkRecord) float64 { return float64(r.Spec.SizeBytes) / (1 << 20) },
			func(r *result.BulkRecord) float64 { return r.ServerAllocBytesPerMiB })
		sizes := map[float64]bool{}
		for _, l := range s {
			for _, p := range l.Points {
				sizes[p.X] = true
			}
		}
		if len(sizes) < 2 {
			continue // one size says nothing about growth
		}
		figs = append(figs, Figure{Kind: "bulk-alloc", LogY: true,
			Title:  fmt.Sprintf("Server heap allocated per MiB, %s chunks, %d stream(s)", result.FormatBytes(int64(k.chunk)), k.streams),
			XLabel: "download size (MiB)", YLabel: "bytes allocated per MiB sent", Series: s})
	}
	return figs
}
