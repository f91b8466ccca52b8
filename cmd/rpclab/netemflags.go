// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// netemFlags describe an emulated network: one-way delay, jitter and rate
// for both directions, with optional overrides for the down direction
// (server to client).
type netemFlags struct {
	delay, jitter         time.Duration
	rate                  string
	downDelay, downJitter time.Duration
	downRate              string
	queue                 int
}

// register adds --delay, --jitter, --rate and the --down-* overrides.
func (nf *netemFlags) register(f *pflag.FlagSet) {
	f.DurationVar(&nf.delay, "delay", 0, "emulated one-way delay in each direction (RTT = 2x; e.g. 2.5ms, 50us); puts rpclab's netem proxy between client and server")
	f.DurationVar(&nf.jitter, "jitter", 0, "emulated jitter: each chunk's delay varies uniformly within ±jitter (order is kept)")
	f.StringVar(&nf.rate, "rate", "", "emulated bandwidth per direction, as tc writes it: 100mbit, 1gbit, 125mbps (bytes/s)")
	f.DurationVar(&nf.downDelay, "down-delay", 0, "one-way delay server->client, if different from --delay")
	f.DurationVar(&nf.downJitter, "down-jitter", 0, "jitter server->client, if different from --jitter")
	f.StringVar(&nf.downRate, "down-rate", "", "bandwidth server->client, if different from --rate (0: unlimited)")
	f.IntVar(&nf.queue, "netem-queue", netem.DefaultQueueBytes, "bytes each direction of each emulated connection holds in flight before the sender waits")
}

// network returns the network the flags describe; ok is false when no
// netem flag was given.
func (nf *netemFlags) network(fs *pflag.FlagSet) (n netem.Network, ok bool, err error) {
	for _, name := range []string{"delay", "jitter", "rate", "down-delay", "down-jitter", "down-rate"} {
		ok = ok || fs.Changed(name)
	}
	up := netem.Link{Delay: nf.delay, Jitter: nf.jitter}
	if nf.rate != "" {
		if up.RateBps, err = netem.ParseRate(nf.rate); err != nil {
			return n, ok, usage.Wrap(fmt.Errorf("--rate: %w", err))
		}
		if up.RateBps == 0 {
			return n, ok, usage.Wrap(fmt.Errorf("--rate %s: a link of 0 bit/s carries nothing; leave --rate out for an unlimited link", nf.rate))
		}
	}
	down := up
	if fs.Changed("down-delay") {
		down.Delay = nf.downDelay
	}
	if fs.Changed("down-jitter") {
		down.Jitter = nf.downJitter
	}
	if fs.Changed("down-rate") {
		if down.RateBps, err = netem.ParseRate(nf.downRate); err != nil {
			return n, ok, usage.Wrap(fmt.Errorf("--down-rate: %w", err))
		}
	}
	n = netem.Network{Up: up, Down: down}
	if err := n.Validate(); err != nil {
		return n, ok, err
	}
	if nf.queue <= 0 {
		return n, ok, usage.Wrap(fmt.Errorf("--netem-queue: %d bytes: must be positive", nf.queue))
	}
	return n, ok, nil
}

// slowRateHint says, when every record failed (or stalled) behind an emulated rate
// below netem.SlowRateBps (--rate or --down-rate), what that rate is and
// the unit most likely meant: "--rate 2000bit is 2 kbit/s (250 bytes/s)
// per direction; did you mean 2000mbit?". It is empty otherwise.
func (nf *netemFlags) slowRateHint(fs *pflag.FlagSet, recs []result.Record) string {
	if len(recs) == 0 {
		return ""
	}
	for _, r := range recs {
		// A starved link holds RPCs in flight: such a step is stalled.
		if r.Status != result.StatusFailed && r.Status != result.StatusStalled {
			return ""
		}
	}
	for _, f := range []struct{ name, val string }{{"rate", nf.rate}, {"down-rate", nf.downRate}} {
		if !fs.Changed(f.name) {
			continue
		}
		bps, err := netem.ParseRate(f.val)
		if err != nil || bps == 0 || bps >= netem.SlowRateBps {
			continue
		}
		num := strings.TrimRightFunc(strings.TrimSpace(f.val), unicode.IsLetter)
		rate := result.FormatRate(bps) // "2kbit"
		i := strings.IndexFunc(rate, unicode.IsLetter)
		return fmt.Sprintf("every step failed, and --%s %s is %s %s/s (%s bytes/s) per direction, slower than any link rpclab studies; did you mean %smbit?",
			f.name, f.val, rate[:i], rate[i:], strconv.FormatFloat(float64(bps)/8, 'g', -1, 64), num)
	}
	return ""
}
