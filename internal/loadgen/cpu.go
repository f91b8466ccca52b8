// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"slices"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/proto/usagepb"
)

// readHost reads the host's CPU times, nil when /proc/stat cannot be read
// (not Linux).
func readHost() *procstat.CPUStat {
	s, err := procstat.ReadCPUStat()
	if err != nil {
		return nil
	}
	return &s
}

// HostCPU is the host's CPU between the reads s0 and s1 (nil when either
// is missing): on the client's CPUs (every CPU when clientCPUs is empty),
// on the server's (when serverCPUs is not empty) and on the whole host.
// Every ping record carries it (record.host_cpu), so that the verdict
// can tell CPU taken by other work from the client's and the server's.
func HostCPU(s0, s1 *procstat.CPUStat, clientCPUs, serverCPUs []int) *result.HostCPU {
	if s0 == nil || s1 == nil {
		return nil
	}
	d := s1.Sub(*s0)
	all := d.CPUs()
	if len(all) == 0 {
		return nil
	}
	times := func(cpus []int) result.CPUTimes {
		t := d.Sum(cpus)
		return result.CPUTimes{CPUs: slices.Sorted(slices.Values(cpus)), BusyNS: int64(t.Busy), IdleNS: int64(t.Idle), StealNS: int64(t.Steal)}
	}
	h := &result.HostCPU{Host: times(all)}
	if len(clientCPUs) > 0 {
		h.Client = times(clientCPUs)
	} else {
		h.Client = h.Host
	}
	if len(serverCPUs) > 0 {
		s := times(serverCPUs)
		h.Server = &s
	}
	return h
}

// UsageTimeout bounds each read of the server's CPU time: a server that
// does not serve rpclab.v1.UsageService answers Unimplemented at once, so
// only a stalled server waits it out, and the step goes on without.
const UsageTimeout = time.Second

// readUsage asks the server for its CPU time on the frame's first
// connection (nil when it does not answer: a foreign server).
func (f *frame) readUsage(ctx context.Context) *usagepb.UsageResponse {
	ctx, cancel := context.WithTimeout(ctx, UsageTimeout)
	defer cancel()
	u, err := usagepb.NewUsageServiceClient(f.conns[0]).Usage(ctx, &usagepb.UsageRequest{})
	if err != nil {
		return nil
	}
	return u
}

// serverCPU is the server's CPU between the frame's two reads over
// elapsed; nil when a read is missing or the two came from different
// processes (a restarted server).
func (f *frame) serverCPU(elapsed time.Duration, requests int64) *result.ServerCPU {
	u0, u1 := f.usage0, f.usage1
	if u0 == nil || u1 == nil || u0.GetPid() != u1.GetPid() || u1.GetCpuNs() < u0.GetCpuNs() || u1.GetCpus() < 1 || elapsed <= 0 {
		return nil
	}
	s := &result.ServerCPU{CPUNS: u1.GetCpuNs() - u0.GetCpuNs(), CPUs: int(u1.GetCpus())}
	if requests > 0 {
		s.CPUNSPerRPC = float64(s.CPUNS) / float64(requests)
	}
	s.Busy = float64(s.CPUNS) / float64(elapsed) / float64(s.CPUs)
	return s
}
