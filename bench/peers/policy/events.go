// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rpclab/rpclab/pool"
)

// EventColumns names the fields EventRow gives of an adaptive pool's
// decision, in order: a header for `policies run --events` and
// `policies ramp --events`.
var EventColumns = []string{"at s", "from", "to", "action", "reason", "mean in flight", "max write wait µs", "rpc/s",
	"with rpc/s", "without rpc/s", "back-off s"}

// EventRow is e as the text fields EventColumns names, its time in seconds
// after start (negative before it); the trial's two throughputs are zero
// on decisions that did not judge one.
func EventRow(e pool.Event, start time.Time) []string {
	f := func(format string, v any) string { return fmt.Sprintf(format, v) }
	action := "hold"
	switch {
	case e.To > e.From:
		action = "grow"
	case e.To < e.From:
		action = "shrink"
	}
	return []string{
		f("%.1f", e.At.Sub(start).Seconds()), strconv.Itoa(e.From), strconv.Itoa(e.To), action, e.Reason,
		f("%.1f", e.MeanInFlight), f("%.0f", float64(e.WriteWait)/1e3), f("%.0f", e.Throughput),
		f("%.0f", e.With), f("%.0f", e.Without), f("%.0f", e.Backoff.Seconds()),
	}
}
