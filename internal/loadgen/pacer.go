// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/rpclab/rpclab/internal/usage"
)

// Arrival processes of the open loop.
const (
	// Constant: sends are evenly spaced, 1/rate apart.
	Constant = "constant"
	// Poisson: the gaps between sends are exponentially distributed with
	// mean 1/rate (a Poisson process, as grpc's open-loop client).
	Poisson = "poisson"
)

// Pacer gives the intended send times of an open loop. It knows no clock:
// Next returns the offset of the next send from the start of the schedule,
// so a schedule is a pure sequence that tests read without sleeping (as
// ghz's load.Pacer). Offsets never decrease. A Pacer is not safe for
// concurrent use.
type Pacer interface {
	// Next returns the intended offset of the next send.
	Next() time.Duration
	// Rate is the mean number of sends per second.
	Rate() float64
}

// NewPacer returns the pacer of arrival ("constant" or "poisson") at rate
// sends per second. seed fixes a Poisson schedule; Constant ignores it.
func NewPacer(arrival string, rate float64, seed uint64) (Pacer, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, usage.Errorf(ErrRate, "must be a positive number of RPCs per second, got %v", rate)
	}
	switch arrival {
	case Constant, "":
		return &constantPacer{rate: rate}, nil
	case Poisson:
		return &poissonPacer{rate: rate, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}, nil
	default:
		return nil, usage.Errorf(ErrArrival, "unknown arrival process %q (want constant or poisson)", arrival)
	}
}

// constantPacer computes each offset from the send count, so rounding never
// accumulates: send n is at n/rate.
type constantPacer struct {
	rate float64
	n    uint64
}

func (p *constantPacer) Next() time.Duration {
	d := time.Duration(float64(p.n) * 1e9 / p.rate)
	p.n++
	return d
}

func (p *constantPacer) Rate() float64 { return p.rate }

// poissonPacer adds exponential gaps; the first send is at 0.
type poissonPacer struct {
	rate  float64
	rng   *rand.Rand
	t     float64 // seconds
	begun bool
}

func (p *poissonPacer) Next() time.Duration {
	if p.begun {
		p.t += p.rng.ExpFloat64() / p.rate
	}
	p.begun = true
	return time.Duration(p.t * 1e9)
}

func (p *poissonPacer) Rate() float64 { return p.rate }

// ParseArrival checks an --arrival value.
func ParseArrival(s string) (string, error) {
	switch s {
	case Constant, Poisson:
		return s, nil
	}
	return "", usage.Errorf(ErrArrival, "unknown arrival process %q (want constant or poisson)", s)
}
