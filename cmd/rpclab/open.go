// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/loadgen"
)

// openFlags are the open-loop flags of sweep. Two names differ from issue
// 9's: the offered load is --rps, not --rate, because --rate is already the
// netem link's bandwidth; the bound on RPCs in flight is --max-outstanding,
// not --max-inflight, because --max-inflight is already the top of the
// closed loop's --min-inflight/--max-inflight range.
type openFlags struct {
	rates          []float64
	arrival        string
	maxOutstanding int
	slo            string
}

func (of *openFlags) register(f *pflag.FlagSet) {
	f.Float64SliceVar(&of.rates, "rps", nil, "open loop: offered rates in RPCs per second, e.g. 1000,5000,20000 (sends follow a schedule whatever the replies; latency counts from the intended send time). --inflight is then the connection count of per-worker")
	f.StringVar(&of.arrival, "arrival", loadgen.Constant, "open loop: arrival process, constant or poisson")
	f.IntVar(&of.maxOutstanding, "max-outstanding", loadgen.DefaultMaxOutstanding, "open loop: most RPCs in flight; a send that finds this many waits, and the record counts it (max_outstanding_hits)")
	f.StringVar(&of.slo, "slo", "", "open loop: latency objective such as p99=1ms; each layout's rates stop at the first one missing it, and the highest sustained rate is printed")
}

// open maps the flags to a loadgen.OpenSpec; nil without --rate.
func (of *openFlags) open(fs *pflag.FlagSet, sf *sweepFlags) (*loadgen.OpenSpec, error) {
	if !fs.Changed("rps") {
		for _, name := range []string{"arrival", "max-outstanding", "slo"} {
			if fs.Changed(name) {
				return nil, usageError{errors.New("--" + name + " needs --rps (the open loop)")}
			}
		}
		return nil, nil
	}
	if sf.client != "go" {
		return nil, usageError{errors.New("--rps: the open loop runs in the go client only")}
	}
	o := &loadgen.OpenSpec{Rates: of.rates, Arrival: of.arrival, MaxOutstanding: of.maxOutstanding}
	if of.slo != "" {
		s, err := loadgen.ParseSLO(of.slo)
		if err != nil {
			return nil, err
		}
		o.SLO = s
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}
