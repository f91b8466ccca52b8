// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/sockdiag"
)

// connAcc is one connection's first and latest TCP_INFO.
type connAcc struct {
	idx         int
	first, last sockdiag.TCPInfo
}

// sampleThreads is how many of an interval's busiest threads a sample
// names.
const sampleThreads = 4

// add folds a snapshot into the window.
func (s *Sampler) add(snap *snapshot) {
	first := s.prev == nil
	if first {
		s.t0 = snap.at
		s.rec.StartedAt = snap.at.UTC()
		s.cpu0, s.host0 = snap.cpu, snap.hostBusy
	}
	at := int64(snap.at.Sub(s.t0))
	r := &s.rec
	r.DurationNS = at
	r.Process.Comm = snap.name
	r.Listening = snap.listening
	r.CPU.HostCPUs = snap.hostCPUs
	r.CPU.AllowedCPUs = float64(r.CPU.AffinityCPUs)
	if q := r.CPU.QuotaCPUs; q > 0 && (q < r.CPU.AllowedCPUs || r.CPU.AllowedCPUs == 0) {
		r.CPU.AllowedCPUs = q
	}
	r.CPU.ProcessNS = int64(max(snap.cpu-s.cpu0, 0))
	r.CPU.HostBusyNS = int64(max(snap.hostBusy-s.host0, 0))
	sample := result.LiveSample{AtNS: at}
	if !first {
		sample.CPUNS = int64(max(snap.cpu-s.prev.cpu, 0))
		sample.HostBusyNS = int64(max(snap.hostBusy-s.prev.hostBusy, 0))
	}
	s.addConns(snap, at, first, &sample)
	sample.Conns = busiestConns(sample.Conns)
	sample.Threads = s.addThreads(snap, first)
	if s.czw != nil && snap.cz != nil {
		sample.Streams = s.czw.add(snap.cz)
		if len(sample.Streams) > result.MaxLiveSampleEntries {
			slices.SortStableFunc(sample.Streams, func(a, b result.LiveStreams) int { return cmp.Compare(b.InFlight, a.InFlight) })
			sample.Streams = sample.Streams[:result.MaxLiveSampleEntries]
		}
	}
	if !first {
		r.Samples = append(r.Samples, sample)
		if len(r.Samples) > result.MaxLiveSamples {
			r.Samples = slices.Delete(r.Samples, 0, len(r.Samples)-result.MaxLiveSamples)
		}
	}
	s.prev = snap
}

// addConns updates each connection's totals and notes its interval.
func (s *Sampler) addConns(snap *snapshot, at int64, first bool, sample *result.LiveSample) {
	r := &s.rec
	for _, k := range snap.socks {
		a, ok := s.conns[k.inode]
		if !ok {
			if len(s.conns) >= MaxConns {
				s.dropped++
				continue
			}
			a = &connAcc{idx: len(r.Conns), first: k.info, last: k.info}
			if !first {
				// Born in the window: its counters count from zero.
				a.first = sockdiag.TCPInfo{}
			}
			s.conns[k.inode] = a
			r.Conns = append(r.Conns, result.LiveConn{Inode: k.inode, Local: k.local.String(), Remote: k.remote.String(), FirstNS: at})
		}
		prev := a.last
		if !ok && !first {
			prev = sockdiag.TCPInfo{}
		}
		a.last = k.info
		c := &r.Conns[a.idx]
		c.LastNS, c.Samples = at, c.Samples+1
		if k.info.AppLimited {
			c.AppLimited++
		}
		c.NotsentMaxBytes = max(c.NotsentMaxBytes, k.info.NotsentBytes)
		fillTotals(c, a)
		if first {
			continue
		}
		cs := result.LiveConnSample{
			Conn:          a.idx,
			BytesAcked:    sub(k.info.BytesAcked, prev.BytesAcked),
			BytesReceived: sub(k.info.BytesReceived, prev.BytesReceived),
			BusyUS:        sub(k.info.BusyUS, prev.BusyUS),
			LimitedUS:     sub(k.info.RwndLimitedUS, prev.RwndLimitedUS) + sub(k.info.SndbufLimited, prev.SndbufLimited),
		}
		if cs.BytesAcked+cs.BytesReceived+cs.BusyUS+cs.LimitedUS > 0 {
			sample.Conns = append(sample.Conns, cs)
		}
	}
}

// busiestConns keeps a sample's MaxLiveSampleEntries connections that
// moved the most bytes, so a window's time line stays bounded however
// many connections the process holds (the window's totals keep them all).
func busiestConns(cs []result.LiveConnSample) []result.LiveConnSample {
	if len(cs) <= result.MaxLiveSampleEntries {
		return cs
	}
	slices.SortStableFunc(cs, func(a, b result.LiveConnSample) int {
		return cmp.Compare(b.BytesAcked+b.BytesReceived, a.BytesAcked+a.BytesReceived)
	})
	return cs[:result.MaxLiveSampleEntries]
}

// fillTotals sets a connection's window totals from its first and last
// TCP_INFO.
func fillTotals(c *result.LiveConn, a *connAcc) {
	f, l := a.first, a.last
	c.BytesAcked, c.BytesReceived = sub(l.BytesAcked, f.BytesAcked), sub(l.BytesReceived, f.BytesReceived)
	c.BytesSent, c.BytesRetrans = sub(l.BytesSent, f.BytesSent), sub(l.BytesRetrans, f.BytesRetrans)
	c.BusyUS = sub(l.BusyUS, f.BusyUS)
	c.RwndLimitedUS, c.SndbufLimitedUS = sub(l.RwndLimitedUS, f.RwndLimitedUS), sub(l.SndbufLimited, f.SndbufLimited)
	c.DeliveryRateBps = l.DeliveryRate * 8
	c.RTTUS, c.MinRTTUS, c.SndCwnd, c.Unacked = l.RTT, l.MinRTT, l.SndCwnd, l.Unacked
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// addThreads updates the window's busiest threads and returns the
// interval's.
func (s *Sampler) addThreads(snap *snapshot, first bool) []result.LiveThread {
	r := &s.rec
	var interval []result.LiveThread
	for _, t := range snap.threads {
		if _, ok := s.threads0[t.tid]; !ok && len(s.threads0) < 4*maxThreads {
			base := t
			if !first {
				base.cpu = 0
			}
			s.threads0[t.tid] = base
		}
		if p, ok := s.threadsPrev[t.tid]; ok && !first {
			if d := t.cpu - p.cpu; d > 0 {
				interval = append(interval, result.LiveThread{TID: t.tid, Name: t.name, CPUNS: int64(d)})
			}
		}
	}
	clear(s.threadsPrev)
	all := make([]result.LiveThread, 0, len(snap.threads))
	var wait time.Duration
	for _, t := range snap.threads {
		s.threadsPrev[t.tid] = t
		if b, ok := s.threads0[t.tid]; ok {
			all = append(all, result.LiveThread{TID: t.tid, Name: t.name, CPUNS: int64(max(t.cpu-b.cpu, 0))})
			wait += max(t.wait-b.wait, 0)
		}
	}
	// Threads that ended keep the wait they had.
	r.CPU.WaitNS = max(r.CPU.WaitNS, int64(wait))
	busiest := func(ts []result.LiveThread, n int) []result.LiveThread {
		slices.SortFunc(ts, func(a, b result.LiveThread) int {
			return cmp.Or(cmp.Compare(b.CPUNS, a.CPUNS), cmp.Compare(a.TID, b.TID))
		})
		return ts[:min(len(ts), n)]
	}
	r.CPU.ThreadCount = len(snap.threads)
	r.CPU.Threads = busiest(all, result.MaxLiveThreads)
	return busiest(interval, sampleThreads)
}

// Record returns the window so far: a copy the caller may keep, with the
// status and note for an end (ended: the process exited; interrupted).
func (s *Sampler) Record(status string) *result.LiveRecord {
	r := s.rec
	r.Status = status
	r.Conns = append([]result.LiveConn{}, s.rec.Conns...)
	r.Samples = append([]result.LiveSample{}, s.rec.Samples...)
	r.CPU.Threads = append([]result.LiveThread{}, s.rec.CPU.Threads...)
	var notes []string
	if status == result.LiveEnded {
		notes = append(notes, fmt.Sprintf("the process ended after %v of the window: what was sampled is judged", time.Duration(r.DurationNS).Round(time.Millisecond)))
	}
	if s.dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d connections beyond the first %d were left out", s.dropped, MaxConns))
	}
	if s.czw != nil {
		r.Channelz = s.czw.record()
	}
	for i, n := range notes {
		if i > 0 {
			r.Note += "; "
		}
		r.Note += n
	}
	return &r
}
