// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/rpclab/rpclab/bulk"
	"github.com/rpclab/rpclab/result"
)

// bulkGroup keys the steps that are compared with each other: same size,
// chunk and streams, different transports.
type bulkGroup struct {
	size    int64
	chunk   int
	streams int
}

// BulkTable writes one row per bulk record, with its throughput and CPU per
// GiB relative to the tcp step of the same size, chunk and streams ("x tcp";
// "-" without one).
func BulkTable(w io.Writer, recs []bulk.Record) error {
	tcp := map[bulkGroup]*bulk.Record{}
	for i := range recs {
		r := &recs[i]
		if r.Spec.Transport == bulk.TCP && r.Status == result.StatusOK {
			tcp[bulkGroup{r.Spec.SizeBytes, r.Spec.ChunkBytes, r.Spec.Streams}] = r
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transport\tsize\tchunk\tstreams\tMB/s\tx tcp\tclient CPU s/GiB\tserver CPU s/GiB\tCPU x tcp\tsrv alloc B/MiB\tsrv allocs/req\tcli alloc B/MiB\tcli RSS MiB\tsrv RSS MiB\tstatus\t")
	for i := range recs {
		r := &recs[i]
		mbps, ratio, cpuRatio := "-", "-", "-"
		if r.Status == result.StatusOK {
			mbps = strconv.FormatFloat(r.ThroughputBytesPerS/1e6, 'f', 0, 64)
			if t := tcp[bulkGroup{r.Spec.SizeBytes, r.Spec.ChunkBytes, r.Spec.Streams}]; t != nil && t.ThroughputBytesPerS > 0 {
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
			r.Spec.Transport, bulk.FormatBytes(r.Spec.SizeBytes), bulk.FormatBytes(int64(r.Spec.ChunkBytes)), r.Spec.Streams,
			mbps, ratio, bulkFixed(r.ClientCPUSPerGiB, 3), bulkKnown(r.ServerCPUSPerGiB, 3), cpuRatio,
			bulkKnown(r.ServerAllocBytesPerMiB, 0), bulkKnown(r.ServerAllocsPerRequest, 0), bulkFixed(r.ClientAllocBytesPerMiB, 0),
			bulkMiB(r.ClientPeakRSSBytes), bulkMiB(r.ServerPeakRSSBytes), status)
	}
	return tw.Flush()
}

// bulkCPUPerGiB is client plus server CPU seconds per GiB (client only when the
// server's is unknown).
func bulkCPUPerGiB(r *bulk.Record) float64 {
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
