// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"strconv"
)

// FigPoolSize: the size an adaptive pool (--conn pool:auto) chose over each
// step's interval, one step line per record that has pool_sizes. Only
// groups with such a record get it, after their other figures.
const FigPoolSize = "pool-size"

// poolSizeFigure charts the record's pool_sizes of rows as steps: each
// size holds from its t_ns until the next resize, the last until the
// interval's end. ok is false when no row has any.
func poolSizeFigure(rows []RunRow) (f Figure, ok bool) {
	f = Figure{Kind: FigPoolSize, Title: "Adaptive pool size over the interval",
		XLabel: "time in the interval (s)", YLabel: "connections"}
	runs := map[string]bool{}
	for _, r := range rows {
		runs[r.Run] = true
	}
	for _, r := range rows {
		ps := r.Rec.PoolSizes
		if len(ps) == 0 {
			continue
		}
		label := r.Rec.Spec.ConnLabel() + " in-flight " + strconv.Itoa(r.Rec.Spec.Inflight)
		if len(runs) > 1 {
			label = fmt.Sprintf("%s: %s", r.Run, label)
		}
		s := Series{Label: label, Color: len(f.Series), Shape: -1}
		for i, p := range ps {
			x := float64(p.TNS) / 1e9
			if i > 0 {
				s.Points = append(s.Points, Point{X: x, Y: float64(ps[i-1].Size)})
			}
			s.Points = append(s.Points, Point{X: x, Y: float64(p.Size)})
		}
		if end := float64(r.Rec.Spec.IntervalNS) / 1e9; end > s.Points[len(s.Points)-1].X {
			s.Points = append(s.Points, Point{X: end, Y: float64(ps[len(ps)-1].Size)})
		}
		f.Series = append(f.Series, s)
	}
	return f, len(f.Series) > 0
}
