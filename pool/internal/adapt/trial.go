// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package adapt

import "time"

// BacklogSlack is the RPCs in flight a parked interval may add beyond
// twice the trial's start before the park counts as a backlog: an open
// loop's in-flight count moves by a few RPCs from one second to the next.
const BacklogSlack = 8

// TrialState is a paired trial of one new connection. Its intervals run
// in blocks of four, B A A B: with every connection (B), then twice with
// the new one parked (A: no new RPC picks it), then with every one again.
// A drift of the host's speed that is linear over a block weighs the same
// on both sides of each pair (B A, A B), which a baseline taken before
// the trial does not: the verdict compares the two sides side by side.
type TrialState struct {
	// Base is the size the trial is judged against (the size before it).
	Base int
	// K counts the trial's intervals measured so far.
	K int
	// StartPeak is the most RPCs in flight in the interval before the
	// trial: the park guard's limit is twice it plus BacklogSlack.
	StartPeak int64
	// InFlight sums the mean RPCs in flight of the intervals counted.
	InFlight float64
	// Pairs sums, per pair (B A, A B) and side (0: every connection,
	// 1: the base), what the intervals measured.
	Pairs [2][2]Side
	// StealLo and StealHi bound the steal of the intervals counted
	// (StealSeen: any with a known steal); Stolen counts those left out.
	StealLo, StealHi float64
	StealSeen        bool
	Stolen           int
}

// Side is what one side of a trial's pair measured: RPCs completed, the
// time they cover and the RPCs' summed time in flight.
type Side struct {
	RPCs  float64
	Time  time.Duration
	Spent time.Duration
}

func (d Side) rate() float64          { return rate(d.RPCs, d.Time) }
func (d Side) latency() time.Duration { return perRPC(d.Spent, d.RPCs) }
func (d Side) measured() bool         { return d.Time > 0 && d.RPCs >= 1 }
func (d Side) plus(e Side) Side       { return Side{d.RPCs + e.RPCs, d.Time + e.Time, d.Spent + e.Spent} }

func newTrial(base int, peak int64) TrialState { return TrialState{Base: base, StartPeak: peak} }

// parkLimit is the RPCs in flight past which the park guard gives a
// parked connection back: twice the start's peak, plus BacklogSlack.
func (t TrialState) parkLimit() int64 {
	return 2*t.StartPeak + BacklogSlack
}

// parked reports whether the trial's next interval runs without its new
// connection.
func (t TrialState) parked() bool { return parkedAt(t.K) }

// done reports whether the trial has measured TrialTime.
func (t TrialState) done(r Rule) bool { return time.Duration(t.K)*r.Interval >= r.TrialTime() }

// parkedAt reports whether a trial's interval k (from 0) runs with the
// base only: the middle two of each block of four, B A A B, so that a
// drift linear in time weighs the same on both sizes.
func parkedAt(k int) bool {
	return k%4 == 1 || k%4 == 2
}

// pairOf is the pair (0: B A, 1: A B of each block) and side (0: every
// connection, 1: the base) of interval k.
func pairOf(k int) (pair, side int) {
	switch k % 4 {
	case 0:
		return 0, 0
	case 1:
		return 0, 1
	case 2:
		return 1, 1
	default:
		return 1, 0
	}
}

// add counts the interval of s on its side.
func (t TrialState) add(s Signals) TrialState {
	p, side := pairOf(t.K)
	t.Pairs[p][side] = t.Pairs[p][side].plus(Side{float64(s.completed()), s.Interval, s.spent()})
	t.InFlight += s.Mean()
	t.K++
	return t
}

// meanInFlight is the mean RPCs in flight over the intervals counted.
func (t TrialState) meanInFlight() float64 {
	if t.K == 0 {
		return 0
	}
	return t.InFlight / float64(t.K)
}

// restart starts the measurement again, keeping what the trial is.
func (t TrialState) restart() TrialState {
	return TrialState{Base: t.Base, StartPeak: t.StartPeak, Stolen: t.Stolen}
}

// steal reports whether the interval's steal strays by more than band
// from every interval counted so far (it is then left out); else it
// returns t with the steal counted. A steal that stays put weighs on both
// sides alike; one that comes in bursts does not.
func (t TrialState) steal(band, steal float64) (TrialState, bool) {
	if band <= 0 || steal < 0 {
		return t, false
	}
	if !t.StealSeen {
		t.StealLo, t.StealHi, t.StealSeen = steal, steal, true
		return t, false
	}
	if steal > t.StealLo+band || steal < t.StealHi-band {
		t.Stolen++
		return t, true
	}
	t.StealLo, t.StealHi = min(t.StealLo, steal), max(t.StealHi, steal)
	return t, false
}

// Verdict is a judged trial: the throughputs (RPC/s) and mean times in
// flight with the new connection and without it.
type Verdict struct {
	Judged                bool
	With, Without         float64
	WithTime, WithoutTime time.Duration
	Gain, Faster          bool
}

// judge compares the trial's two sides. A gain is throughput up by
// minGain; faster is the throughput held and the RPCs' mean time in
// flight down by minGain (under an open loop the throughput is the
// offered rate whatever the size, and only the time in flight shows what
// a connection did). Either needs each pair to show at least half of
// minGain the same way, so a step in the load inside the trial, which
// moves one pair and not the other, is not read as the connection's.
func (t TrialState) judge(minGain float64) Verdict {
	with := t.Pairs[0][0].plus(t.Pairs[1][0])
	without := t.Pairs[0][1].plus(t.Pairs[1][1])
	v := Verdict{Judged: true, With: with.rate(), Without: without.rate(), WithTime: with.latency(), WithoutTime: without.latency()}
	half := minGain / 2
	rose := t.agree(func(a, b Side) bool { return a.rate() >= b.rate()*(1+half) })
	quicker := t.agree(func(a, b Side) bool { return float64(a.latency()) <= float64(b.latency())*(1-half) })
	v.Gain = rose && v.With >= v.Without*(1+minGain) && v.With > v.Without
	held := v.With >= v.Without*(1-minGain)
	known := v.WithTime > 0 && v.WithoutTime > 0
	v.Faster = held && known && quicker && float64(v.WithTime) <= float64(v.WithoutTime)*(1-minGain) && v.WithTime < v.WithoutTime
	return v
}

// agree reports whether every pair whose two sides measured something
// goes way(with, without).
func (t TrialState) agree(way func(with, without Side) bool) bool {
	for _, p := range t.Pairs {
		if p[0].measured() && p[1].measured() && !way(p[0], p[1]) {
			return false
		}
	}
	return true
}
