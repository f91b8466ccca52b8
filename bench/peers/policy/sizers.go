// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package policy

import (
	"math"
	"time"

	"github.com/rpclab/rpclab/pool/adaptive"
)

// The reasons the anchors' Sizers give, in words.
const (
	reasonAbove    = "load above the policy's grow watermark"
	reasonBelow    = "load below the policy's shrink watermark"
	reasonBalanced = "load between the watermarks"
	reasonIdleWait = "load below the shrink watermark: waiting"
)

// The anchors: the sizing policies that ship in other pools,
// written here from their documented thresholds (not their code) as
// adaptive.Sizers, so that each runs on rpclab's pool with the same
// connections, pick and signals as rpclab's own Rule, and only the policy
// differs. Each reads the RPCs in flight per connection at the end of each
// interval (adaptive.Signals); none reads write wait or CPU, as none of the
// originals does.

// SizerInterval is how often the anchors' Sizers decide. The originals
// grow on an event (an RPC picked onto a busy channel, a stream that finds
// no free slot); a 100 ms tick stands in for that event, and their slower
// checks (Spanner's shrink, yarpc's) count ticks of it.
const SizerInterval = 100 * time.Millisecond

// Spanner is the Cloud Spanner client's dynamic channel pool (as
// google-cloud-go spanner/dynamic_channel_pool.go describes it, with the
// same defaults in Java and Rust): grow when a channel, or the channels on
// average, carry more than MaxRPCPerChannel RPCs in flight, toward
// ceil(in flight / target) channels with target halfway between the two
// watermarks, adding at most max(2, 30%) channels per step and then
// waiting ScaleUpCooldown; every CheckEvery, count a check whose average
// is at or below MinRPCPerChannel, and after LowChecks such checks in a
// row shrink toward the same target, at most MaxRemove channels per step.
// rpclab's pool adds and removes one connection per tick, so a step of
// several is spread over consecutive ticks. (google-cloud-go's code at
// commit 00f3009 defaults to 50/5 with a 30 s check; its thresholds are
// fields here.)
type Spanner struct {
	MaxRPCPerChannel float64       // grow above (default 25)
	MinRPCPerChannel float64       // shrink at or below (default 15)
	ScaleUpCooldown  time.Duration // between growth steps (default 10 s)
	CheckEvery       time.Duration // between shrink checks (default 3 min)
	LowChecks        int           // low checks in a row before a shrink (default 3)
	MaxScaleUpShare  float64       // channels added per step, over the size (default 0.3, at least 2)
	MaxRemove        int           // channels removed per step (default 2)

	pending   int // connections still to add (> 0) or remove (< 0) in this step
	lastUp    time.Time
	lastCheck time.Time
	lowRuns   int
}

// NewSpanner is Spanner with the Spanner client's defaults.
func NewSpanner() *Spanner {
	return &Spanner{MaxRPCPerChannel: 25, MinRPCPerChannel: 15, ScaleUpCooldown: 10 * time.Second,
		CheckEvery: 3 * time.Minute, LowChecks: 3, MaxScaleUpShare: 0.3, MaxRemove: 2}
}

var _ adaptive.Sizer = (*Spanner)(nil)

// target is the channel count the in-flight load asks for.
func (p *Spanner) target(load int64) int {
	per := math.Max(1, math.Floor((p.MinRPCPerChannel+p.MaxRPCPerChannel)/2))
	return int(math.Ceil(float64(load) / per))
}

// Size decides one tick.
func (p *Spanner) Size(now time.Time, s adaptive.Signals) adaptive.Decision {
	switch {
	case p.pending > 0:
		p.pending--
		return adaptive.Decision{Action: adaptive.Grow, Reason: reasonAbove}
	case p.pending < 0:
		p.pending++
		return adaptive.Decision{Action: adaptive.Shrink, Reason: reasonBelow}
	}
	n := len(s.Conns)
	if n == 0 {
		return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
	}
	load := s.InFlight()
	var busiest int64
	for _, c := range s.Conns {
		busiest = max(busiest, c.InFlight)
	}
	hot := float64(busiest) > p.MaxRPCPerChannel || perConn(s) > p.MaxRPCPerChannel
	if hot && (p.lastUp.IsZero() || now.Sub(p.lastUp) >= p.ScaleUpCooldown) {
		add := min(p.target(load)-n, max(2, int(math.Ceil(float64(n)*p.MaxScaleUpShare))))
		if add > 0 {
			p.lastUp, p.pending = now, add-1
			return adaptive.Decision{Action: adaptive.Grow, Reason: reasonAbove}
		}
	}
	if p.lastCheck.IsZero() {
		p.lastCheck = now
	}
	if now.Sub(p.lastCheck) < p.CheckEvery {
		return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
	}
	p.lastCheck = now
	if perConn(s) > p.MinRPCPerChannel {
		p.lowRuns = 0
		return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
	}
	if p.lowRuns++; p.lowRuns < p.LowChecks {
		return adaptive.Decision{Action: adaptive.Hold, Reason: reasonIdleWait}
	}
	p.lowRuns = 0
	remove := min(n-max(p.target(load), 1), p.MaxRemove)
	if remove <= 0 {
		return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
	}
	p.pending = -(remove - 1)
	return adaptive.Decision{Action: adaptive.Shrink, Reason: reasonBelow}
}

// GrowFailed drops the rest of the step.
func (p *Spanner) GrowFailed(time.Time) { p.pending = 0 }

// StreamSlots is gRFC A105's connection scaling (grpc C++ 1.84's
// max_connections_per_subchannel) and grpc-dotnet's: a new connection only
// when every connection has all MaxStreams of its stream slots
// (the server's MAX_CONCURRENT_STREAMS) taken; it never closes one. A105
// says it "does not attempt to maximize throughput".
type StreamSlots struct {
	// MaxStreams is the server's MAX_CONCURRENT_STREAMS (default 100, what
	// many servers and proxies advertise; grpc-go's server advertises no
	// limit, under which A105 never grows).
	MaxStreams int64
}

// NewStreamSlots is StreamSlots for a server of 100 streams.
func NewStreamSlots() *StreamSlots { return &StreamSlots{MaxStreams: 100} }

var _ adaptive.Sizer = (*StreamSlots)(nil)

// Size grows when no connection has a free slot.
func (p *StreamSlots) Size(_ time.Time, s adaptive.Signals) adaptive.Decision {
	if len(s.Conns) == 0 {
		return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
	}
	for _, c := range s.Conns {
		if c.InFlight < p.MaxStreams {
			return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
		}
	}
	return adaptive.Decision{Action: adaptive.Grow, Reason: reasonAbove}
}

// GrowFailed needs nothing: the next tick tries again.
func (*StreamSlots) GrowFailed(time.Time) {}

// Yarpc is yarpc-go's gRPC connection scaling as its docs state it: grow
// when the least-loaded connection carries at least Ratio x MaxStreams
// streams; every ShrinkEvery, retire one connection when the others would
// carry the load below that watermark. (The shrink condition is our
// reading of "shrink every 30 s"; the grow rule is the documented one.)
type Yarpc struct {
	MaxStreams  int64         // default 100
	Ratio       float64       // default 0.7
	ShrinkEvery time.Duration // default 30 s

	lastShrink time.Time
}

// NewYarpc is Yarpc with its documented defaults.
func NewYarpc() *Yarpc { return &Yarpc{MaxStreams: 100, Ratio: 0.7, ShrinkEvery: 30 * time.Second} }

var _ adaptive.Sizer = (*Yarpc)(nil)

// Size decides one tick.
func (p *Yarpc) Size(now time.Time, s adaptive.Signals) adaptive.Decision {
	n := len(s.Conns)
	if n == 0 {
		return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
	}
	watermark := p.Ratio * float64(p.MaxStreams)
	least := s.Conns[0].InFlight
	for _, c := range s.Conns[1:] {
		least = min(least, c.InFlight)
	}
	if float64(least) >= watermark {
		return adaptive.Decision{Action: adaptive.Grow, Reason: reasonAbove}
	}
	if p.lastShrink.IsZero() {
		p.lastShrink = now
	}
	if now.Sub(p.lastShrink) < p.ShrinkEvery {
		return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
	}
	p.lastShrink = now
	if n > 1 && float64(s.InFlight()) < watermark*float64(n-1) {
		return adaptive.Decision{Action: adaptive.Shrink, Reason: reasonBelow}
	}
	return adaptive.Decision{Action: adaptive.Hold, Reason: reasonBalanced}
}

// GrowFailed needs nothing: the next tick tries again.
func (*Yarpc) GrowFailed(time.Time) {}

// perConn is the RPCs in flight per connection at the interval's end (0
// for none).
func perConn(s adaptive.Signals) float64 {
	if len(s.Conns) == 0 {
		return 0
	}
	return float64(s.InFlight()) / float64(len(s.Conns))
}
