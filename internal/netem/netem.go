// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package netem emulates a network link in userspace: a one-way delay, an
// optional jitter and a bandwidth, set per direction, with sub-millisecond
// precision. Data is never reordered, duplicated or lost.
//
// The same link runs two ways. In process, for Go peers, Network.Listener,
// Network.Dialer and Network.Conn wrap one end of a connection (only one end:
// wrapping both doubles the delay); writers do not wait out the latency,
// readers see the data only once it has "arrived". For peers in any
// language, Proxy is a TCP proxy that applies the link between its two
// sides.
//
// What a link does to the bytes is a chain of small effects (Rate, Delay,
// Jitter), each an Effect: a function from the time a chunk reaches it to
// the time the chunk leaves it. Time comes from hooks that tests replace
// with a fake clock.
package netem

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// Link is one direction of an emulated network.
type Link struct {
	// Delay is the one-way latency added to every byte.
	Delay time.Duration `json:"delay_ns"`
	// Jitter varies the delay of each chunk uniformly within ±Jitter. A
	// chunk never leaves before it arrived, nor before the chunk sent
	// ahead of it (no reordering), so large jitter skews the delay upward.
	Jitter time.Duration `json:"jitter_ns,omitempty"`
	// RateBps is the bandwidth in bits per second (0: unlimited). Bytes
	// queue behind each other at this rate before the delay applies.
	RateBps int64 `json:"rate_bps,omitempty"`
}

// Validate reports a negative or out-of-range field: a *usage.Error whose
// Setting is ErrBadDelay, ErrBadJitter or ErrBadRate, so a caller can name
// the setting.
func (l Link) Validate() error { return l.validate(upSettings) }

// validate checks l, naming each bad field by s.
func (l Link) validate(s linkSettings) error {
	switch {
	case l.Delay < 0:
		return usage.Errorf(s.delay, "negative delay %v", l.Delay)
	case l.Jitter < 0:
		return usage.Errorf(s.jitter, "negative jitter %v", l.Jitter)
	case l.RateBps < 0:
		return usage.Errorf(s.rate, "negative rate %d bit/s", l.RateBps)
	case l.RateBps > 0 && l.RateBps < 8:
		return usage.Errorf(s.rate, "rate %d bit/s is below one byte per second", l.RateBps)
	}
	return nil
}

// The settings of a Link (or of a Network's up direction) that Validate's
// errors name; ParseRate's errors wrap ErrBadRate too. A Network's down
// direction has its own (ErrBadDownDelay, ...), so a caller names the
// direction's own setting.
var (
	ErrBadDelay      = errors.New("netem: bad delay")
	ErrBadJitter     = errors.New("netem: bad jitter")
	ErrBadDownDelay  = errors.New("netem: bad down delay")
	ErrBadDownJitter = errors.New("netem: bad down jitter")
	ErrBadDownRate   = errors.New("netem: bad down rate")
)

// linkSettings are the sentinels naming one direction's fields.
type linkSettings struct{ delay, jitter, rate error }

var (
	upSettings   = linkSettings{ErrBadDelay, ErrBadJitter, ErrBadRate}
	downSettings = linkSettings{ErrBadDownDelay, ErrBadDownJitter, ErrBadDownRate}
)

// IsZero reports whether the link adds nothing.
func (l Link) IsZero() bool { return l == Link{} }

// String describes the link, e.g. "delay=2.5ms jitter=100µs rate=1gbit".
func (l Link) String() string {
	s := "delay=" + l.Delay.String()
	if l.Jitter > 0 {
		s += " jitter=" + l.Jitter.String()
	}
	if l.RateBps > 0 {
		s += " rate=" + result.FormatRate(l.RateBps)
	}
	return s
}

// Effects returns the link's chain: Rate, then Delay, then Jitter (each
// only when set). seed makes the jitter reproducible.
func (l Link) Effects(seed uint64) []Effect {
	var out []Effect
	if l.RateBps > 0 {
		out = append(out, NewRate(l.RateBps))
	}
	if l.Delay > 0 {
		out = append(out, Delay(l.Delay))
	}
	if l.Jitter > 0 {
		out = append(out, NewJitter(l.Jitter, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))))
	}
	return out
}

// Network is a link in each direction. Up carries what the client (the
// dialing side) writes; Down carries what the server writes.
type Network struct {
	Up   Link `json:"up"`
	Down Link `json:"down"`
}

// Symmetric returns a Network with l in both directions, so the round-trip
// time is twice l.Delay.
func Symmetric(l Link) Network { return Network{Up: l, Down: l} }

// Validate checks both directions, naming the down direction's fields by
// their own settings (ErrBadDownDelay, ...).
func (n Network) Validate() error {
	if err := n.Up.validate(upSettings); err != nil {
		return err
	}
	return n.Down.validate(downSettings)
}

// RTT is the round-trip time the network adds, jitter and rate aside.
func (n Network) RTT() time.Duration { return n.Up.Delay + n.Down.Delay }

// IsZero reports whether the network adds nothing in either direction.
func (n Network) IsZero() bool { return n.Up.IsZero() && n.Down.IsZero() }

// rateUnits are the suffixes ParseRate knows, as tc(8) spells them: bits
// per second in powers of 1000, "bps" meaning bytes per second.
var rateUnits = []struct {
	suffix string
	mult   float64
}{
	{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1},
	{"tbps", 8e12}, {"gbps", 8e9}, {"mbps", 8e6}, {"kbps", 8e3}, {"bps", 8},
}

// SlowRateBps is 1 Mbit/s: a rate below it is slower than any link rpclab
// studies. ParseRate refuses a bare number below it (it is most likely a
// forgotten unit), and rpclab hints at the unit when every step behind
// such a rate failed.
const SlowRateBps = 1_000_000

// ErrBadRate is wrapped by ParseRate's errors, and names a Link's rate in
// Validate's.
var ErrBadRate = errors.New("netem: bad rate")

// ParseRate parses a bandwidth as tc(8) writes it: a number and a unit,
// "100mbit", "1gbit", "2.5gbit", "10kbit", "500bit", or bytes per second
// with "bps" ("125mbps" = 1gbit). A bare number is bits per second, from 1
// Mbit/s up: a smaller bare number ("2000", read as 2 kbit/s, a link that
// fails every RPC) is refused with a hint to write the unit ("2000bit" if
// that is meant). "0" means unlimited.
func ParseRate(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	unit := false
	for _, u := range rateUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult, unit = strings.TrimSuffix(t, u.suffix), u.mult, true
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w %q: want a number and a unit such as 100mbit, 1gbit or 125mbps (bytes/s)", ErrBadRate, s)
	}
	bps := v * mult
	switch {
	case bps < 0:
		return 0, fmt.Errorf("%w %q: negative", ErrBadRate, s)
	case bps > 0 && bps < 8:
		return 0, fmt.Errorf("%w %q: below one byte per second", ErrBadRate, s)
	case bps > math.MaxInt64/2:
		return 0, fmt.Errorf("%w %q: too large", ErrBadRate, s)
	case !unit && bps > 0 && bps < SlowRateBps:
		return 0, fmt.Errorf("%w %q: a number without a unit is bits per second, %s here, slower than any link rpclab studies; "+
			"write the unit: %[2]smbit, %[2]skbit, or %[2]sbit if you mean it", ErrBadRate, s, result.FormatRate(int64(bps)))
	}
	return int64(bps), nil
}
