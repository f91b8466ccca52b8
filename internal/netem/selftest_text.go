// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteText writes what "rpclab netem selftest" measured: the direct
// loopback round trip, the emulator's error at each set RTT, and its CPU
// per GiB.
func (r *SelfTestResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "direct loopback round trip (64 B): median %.1f µs, p99 %.1f µs\n\n",
		float64(r.DirectRTTNS)/1e3, float64(r.DirectP99NS)/1e3)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "set RTT\tpings\tmedian RTT\tp99 RTT\tadded (median)\tadded (p99)\t")
	for _, p := range r.Points {
		fmt.Fprintf(tw, "%v\t%d\t%s\t%s\t%s\t%s\t\n", time.Duration(p.SetRTTNS), p.Pings,
			usec(p.MedianRTTNS), usec(p.P99RTTNS), usec(p.ErrorNS), usec(p.ErrorP99NS))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("netem: %w", err)
	}
	fmt.Fprintln(w, "\nadded = measured - direct - set: at 0 the emulator's own cost per round trip, elsewhere its error.")
	if r.BulkBytes > 0 {
		fmt.Fprintf(w, "\nbulk %d MiB there and back: direct %.0f MB/s, through the proxy %.0f MB/s (%.2fx the time)\n",
			r.BulkBytes>>20, r.DirectBps/8e6, r.ProxyBps/8e6, r.ProxyVsDirect)
		fmt.Fprintf(w, "process CPU: direct %.2f s, through the proxy %.2f s: the proxy costs %.2f CPU-s per GiB proxied\n",
			float64(r.DirectCPUNS)/1e9, float64(r.ProxyCPUNS)/1e9, r.CPUNSPerGiB/1e9)
	}
	_, err := fmt.Fprintln(w, "(all in one process on loopback; on a shared machine, run it twice.)")
	return err
}

func usec(ns int64) string { return fmt.Sprintf("%.1f µs", float64(ns)/1e3) }
