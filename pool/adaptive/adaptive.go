// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package adaptive is EXPERIMENTAL: the adaptive pool's policy settings
// and sizing hook, for tools that measure the pool, not for services. It
// may change or go away in any release; a service wants
// pool.WithAdaptive.
//
// Why it exists: the policy's settings, signals and trial state live in
// pool's internal package so that the pool's public API stays small, but
// two kinds of tools must reach them. Benchmarks of other pools' policies
// (rpclab's bench/peers, a module of its own, which Go does not let
// import an internal package) run each policy as a Sizer on this same
// pool, with the same signals and connections; and measurements of the
// pool (rpclab's loadgen and doctor) run the policy on a short clock in
// tests and warm a step up for as long as the pool needs to settle
// (Rule.SettleTime). Everything here is an alias of, or a thin wrapper
// over, the internal types.
package adaptive

import (
	"time"

	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/internal/adapt"
)

// Rule is the pool's policy and its settings; each field documents its
// default (DefaultRule).
type Rule = adapt.Rule

// DefaultRule is the Rule pool.WithAdaptive(minConns, maxConns) uses.
func DefaultRule(minConns, maxConns int) Rule { return adapt.DefaultRule(minConns, maxConns) }

// Signals is what the pool measured over one interval; ConnSignals one
// connection's part of it.
type (
	Signals     = adapt.Signals
	ConnSignals = adapt.ConnSignals
)

// Sizer decides the pool's size once per interval, in place of Rule's
// policy (WithSizer).
type Sizer = adapt.Sizer

// Decision is a Sizer's output: an Action and the reason, in words.
type Decision = adapt.Decision

// Action is what a decision does to the size.
type Action = adapt.Action

// The actions.
const (
	Hold   = adapt.Hold
	Grow   = adapt.Grow
	Shrink = adapt.Shrink
)

// WithRule is pool.WithAdaptive with every setting of the policy given.
// New validates r as WithAdaptive's bounds, and every setting (a negative
// duration, a max back-off below the cooldown, ...): an error wrapping
// pool.ErrInvalidOption.
func WithRule(r Rule) pool.Option { return adapt.NewOption(r, nil, false).(pool.Option) }

// WithSizer makes the pool adaptive between minConns and maxConns
// connections (starting with minConns), sized by s once per interval in
// place of Rule's policy. New rejects a nil s, the bounds WithAdaptive
// rejects, and interval <= 0.
func WithSizer(minConns, maxConns int, interval time.Duration, s Sizer) pool.Option {
	r := adapt.DefaultRule(minConns, maxConns)
	r.Interval = interval
	return adapt.NewOption(r, s, true).(pool.Option)
}
