// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"fmt"
	"sort"

	"github.com/rpclab/rpclab/result"
)

// Layout is one connection layout in a doctor study.
type Layout struct {
	// Conn names the layout as --conn spells it ("shared", "pool:4").
	Conn string
	// Best is the successful step with the highest throughput (nil: none
	// succeeded).
	Best *result.Record
	// Inflights are the in-flight counts with a successful step, ascending.
	Inflights []int
}

// Diagnosis is the judgement of an rpclab doctor study: each layout's best
// step, compared with the shared connection's.
type Diagnosis struct {
	// Kind is ConnBottleneck, NotConnection or Inconclusive.
	Kind   Kind
	Shared Layout
	// Pools are the other layouts, in the order the records give them.
	Pools []Layout
	// Gain is the best pool's throughput over the shared connection's
	// (0 when either has no successful step).
	Gain float64
	// Recommended is the pool Advise picks among the pools' best steps
	// (nil unless Kind is ConnBottleneck).
	Recommended *Layout
	// Why says, for an Inconclusive diagnosis, what is missing.
	Why string
	// Busy is what other work took from the study's steps when it took
	// more than OtherWorkShare of some of their CPUs (nil otherwise): the
	// diagnosis says it first, since the figures are not the client's or
	// the service's alone.
	Busy *HostLoad
}

// Diagnose judges the records of a doctor study. A pool whose best step
// reached at least BottleneckRatio times the shared connection's best is a
// connection bottleneck (ConnBottleneck), below it the connection is not
// the limit (NotConnection); either only when the shared connection and
// that pool each succeeded at MinInflights in-flight counts at least, else
// Inconclusive with Why. The advised pool is Advise's pick among every
// pool's best step. Records of a layout other than "shared" count as
// pools; failed and interrupted steps count for nothing.
func Diagnose(recs []result.Record) Diagnosis {
	var d Diagnosis
	byConn := map[string]*Layout{}
	var order []string
	seen := map[string]map[int]bool{}
	for i := range recs {
		r := &recs[i]
		c := ConnLabel(r)
		if byConn[c] == nil {
			byConn[c] = &Layout{Conn: c}
			seen[c] = map[int]bool{}
			order = append(order, c)
		}
		if !clean(r) {
			continue
		}
		l := byConn[c]
		if l.Best == nil || r.ThroughputRPS > l.Best.ThroughputRPS {
			l.Best = r
		}
		if !seen[c][r.Spec.Inflight] {
			seen[c][r.Spec.Inflight] = true
			l.Inflights = append(l.Inflights, r.Spec.Inflight)
			sort.Ints(l.Inflights)
		}
	}
	all := make([]*result.Record, len(recs))
	for i := range recs {
		all[i] = &recs[i]
	}
	d.Busy = Busy(all)
	d.Shared = Layout{Conn: "shared"}
	for _, c := range order {
		if c == "shared" {
			d.Shared = *byConn[c]
		} else {
			d.Pools = append(d.Pools, *byConn[c])
		}
	}
	d.Kind = Inconclusive
	if d.Shared.Best == nil {
		d.Why = "no step on the shared connection succeeded, so nothing can be compared"
		return d
	}
	cands := make([]*result.Record, len(d.Pools))
	var top *Layout
	for i := range d.Pools {
		p := &d.Pools[i]
		cands[i] = p.Best
		if p.Best != nil && (top == nil || p.Best.ThroughputRPS > top.Best.ThroughputRPS) {
			top = p
		}
	}
	if top == nil {
		d.Why = "no step on any pool succeeded, so nothing can be compared"
		return d
	}
	if d.Shared.Best.ThroughputRPS > 0 {
		d.Gain = top.Best.ThroughputRPS / d.Shared.Best.ThroughputRPS
	}
	for _, l := range []*Layout{&d.Shared, top} {
		if len(l.Inflights) < MinInflights {
			d.Why = fmt.Sprintf("needs %s measured at %d in-flight counts at least to judge, got %d (%v)",
				l.Conn, MinInflights, len(l.Inflights), l.Inflights)
			return d
		}
	}
	if d.Gain < BottleneckRatio {
		d.Kind = NotConnection
		return d
	}
	d.Kind = ConnBottleneck
	_, advised := Advise(cands)
	for i := range d.Pools {
		if d.Pools[i].Best == advised {
			d.Recommended = &d.Pools[i]
		}
	}
	return d
}
