// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package live samples a running process from outside, with no
// cooperation and no restart: its TCP connections as the kernel's
// sock_diag reports them (TCP_INFO: bytes, busy and limited times,
// delivery rate, RTT, retransmits), its threads' CPU against the CPUs it
// may use, the host's, its gRPC stack, and, when the process serves it,
// channelz's channels, subchannels and sockets. A Sampler reads /proc,
// sock_diag and channelz only: it never signals, traces or stops the
// process. Judging what it saw is verdict.Live's.
package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
)

// MaxConns bounds the connections a window tracks one by one: a process
// that opens more over a window has the rest left out, and the record's
// note says so.
const MaxConns = 20000

// Options are a Sampler's settings.
type Options struct {
	// Interval is the least time between samples (the caller paces
	// Sample, waiting Next); 1 s when zero.
	Interval time.Duration
	// Budget is the share of one CPU the sampler may use: Next stretches
	// the interval when a sample costs more than Budget of it (a sample of
	// 10,000 connections costs about 20 ms of CPU). 0.01 when zero.
	Budget float64
	// Channelz is the host:port of the process's channelz service ("":
	// none); ChannelzTimeout bounds each read of it (2 s when zero).
	Channelz        string
	ChannelzTimeout time.Duration
	// FindChannelz, when Channelz is empty, asks the process's listening
	// ports (at most 8, on loopback, in its own network namespace only)
	// for channelz after the first sample, and reads the first that
	// answers.
	FindChannelz bool
}

// Sampler is one window over a process. Sample adds a sample; Record
// returns the window so far. Not safe for concurrent use.
type Sampler struct {
	pid  int
	o    Options
	d    *diag
	cz   *channelzClient
	czw  *czWindow
	rec  result.LiveRecord
	t0   time.Time
	prev *snapshot
	// conns maps a connection's inode to its accumulator.
	conns map[uint32]*connAcc
	// threads0 is each thread's CPU when first seen (0 for threads born
	// after the first sample), threadsPrev at the previous sample.
	threads0, threadsPrev map[int]thread
	cpu0, host0           time.Duration
	dropped               int
	samples               int           // taken, Open's included
	steady                time.Duration // the CPU of all but Open's
}

// Open checks that pid exists and may be read, opens sock_diag in its
// network namespace and channelz if asked, and takes the first sample.
func Open(ctx context.Context, pid int, o Options) (*Sampler, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("%w: pid %d", ErrNoProcess, pid)
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Budget <= 0 || o.Budget > 1 {
		o.Budget = 0.01
	}
	if o.ChannelzTimeout <= 0 {
		o.ChannelzTimeout = 2 * time.Second
	}
	s := &Sampler{pid: pid, o: o, conns: map[uint32]*connAcc{}, threads0: map[int]thread{}, threadsPrev: map[int]thread{}}
	if _, _, _, err := readProcess(pid); err != nil {
		if errors.Is(err, ErrEnded) {
			return nil, fmt.Errorf("%w: pid %d", ErrNoProcess, pid)
		}
		return nil, err
	}
	d, err := openDiag(pid)
	if err != nil {
		return nil, err
	}
	s.d = d
	if o.Channelz != "" {
		cz, err := dialChannelz(ctx, o.Channelz, o.ChannelzTimeout)
		if err != nil {
			d.close()
			return nil, err
		}
		if _, err := cz.read(ctx); err != nil {
			cz.close()
			d.close()
			return nil, err
		}
		s.cz, s.czw = cz, &czWindow{addr: o.Channelz}
	}
	s.rec = result.LiveRecord{
		SchemaVersion: result.SchemaVersion, Kind: result.KindLive, Status: result.StatusOK,
		IntervalNS: int64(o.Interval), Process: DetectStack(pid),
	}
	aff, quota := allowedCPUs(pid)
	s.rec.CPU.AffinityCPUs, s.rec.CPU.QuotaCPUs = aff, quota
	if err := s.Sample(ctx); err != nil {
		s.Close()
		if errors.Is(err, ErrEnded) {
			return nil, fmt.Errorf("%w: pid %d", ErrNoProcess, pid)
		}
		return nil, err
	}
	if o.Channelz == "" && o.FindChannelz && d.sameNetns() && s.prev != nil {
		if cz := findChannelz(ctx, s.prev.listening, o.ChannelzTimeout); cz != nil {
			s.cz, s.czw = cz, &czWindow{addr: cz.addr, found: true}
		}
	}
	return s, nil
}

// Close releases the sock_diag socket and the channelz connection.
func (s *Sampler) Close() {
	if s.d != nil {
		s.d.close()
	}
	if s.cz != nil {
		s.cz.close()
	}
}

// PID is the process sampled.
func (s *Sampler) PID() int { return s.pid }

// Sample reads the process once and adds the interval since the previous
// sample to the window. A process that ended returns ErrEnded; the window
// keeps what was sampled before. A channelz read that fails is kept as
// the record's channelz error, not returned.
func (s *Sampler) Sample(ctx context.Context) error {
	before := selfCPU()
	defer func() {
		cost := max(selfCPU()-before, 0)
		s.rec.SamplerCPUNS += int64(cost)
		if s.samples++; s.samples > 1 {
			s.steady += cost
		}
	}()
	snap, err := s.read()
	if err != nil {
		return err
	}
	if s.cz != nil {
		cs, err := s.cz.read(ctx)
		if err != nil {
			s.czw.err = err.Error()
		} else {
			snap.cz = cs
		}
	}
	s.add(snap)
	return nil
}

// selfCPU is rpclab's own CPU time (getrusage), 0 where it cannot be read.
func selfCPU() time.Duration {
	d, _ := procstat.CPUTime(0)
	return d
}

// Next is the time to wait before the next sample: the interval, or
// longer when the samples cost more CPU on average than the budget
// allows, so that sampling a process with many connections stays under
// Budget of one CPU. The first sample (Open's) is not counted: it reads
// every descriptor's link, which later samples do only when the
// descriptors change.
func (s *Sampler) Next() time.Duration {
	return max(s.o.Interval, time.Duration(float64(s.SampleCost())/s.o.Budget))
}

// SampleCost is the mean CPU (user and kernel) of a sample after Open's,
// 0 before one.
func (s *Sampler) SampleCost() time.Duration {
	if s.samples < 2 {
		return 0
	}
	return s.steady / time.Duration(s.samples-1)
}

// maxThreads bounds the threads one sample reads: a process with more
// has its first maxThreads (by /proc's order) read, and the sample says so.
const maxThreads = 4096

// thread is one thread's name and CPU since it started.
type thread struct {
	tid  int
	name string
	cpu  time.Duration
	// wait is the time it was runnable and waited for a CPU
	// (/proc/PID/task/TID/schedstat's second field).
	wait time.Duration
}

// snapshot is one read of the process.
type snapshot struct {
	at        time.Time
	name      string
	cpu       time.Duration
	threads   []thread
	hostBusy  time.Duration
	hostCPUs  int
	socks     []sock
	listening []string
	cz        *czSnapshot
}
