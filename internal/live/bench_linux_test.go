// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"net"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rpclab/rpclab/internal/testutil"
)

// BenchmarkSample takes one sample of this process holding 10, 1,000 and
// 10,000 established TCP sockets (half as many loopback connections, both
// ends): the cost of a sample of a client, in rpclab's time. It reports
// wall time per sample, and the process's CPU per sample (cpu-ms/op, of
// which sys-ms/op in the kernel), the figure docs/live.md's bars are
// about.
func BenchmarkSample(b *testing.B) {
	for _, socks := range []int{10, 1000, 10_000} {
		b.Run("sockets="+strconv.Itoa(socks), func(b *testing.B) { benchSample(b, socks/2) })
	}
}

func benchSample(b *testing.B, pairs int) {
	lis := testutil.Listen(b)
	accepted := make(chan net.Conn, pairs)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range pairs {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			b.Skip("cannot open the connections:", err)
		}
		s := <-accepted
		b.Cleanup(func() {
			// Reset, not closed: sockets left in TIME_WAIT would slow
			// the next run's dumps (the kernel walks them).
			c.(*net.TCPConn).SetLinger(0)
			s.(*net.TCPConn).SetLinger(0)
			c.Close()
			s.Close()
		})
	}
	ctx := testutil.Context(b)
	s, err := Open(ctx, os.Getpid(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ru0, ru1 unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := s.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru1); err != nil {
		b.Fatal(err)
	}
	// The process's CPU (user and kernel, every thread: the sampler, its
	// garbage collection, the idle accept loop) per sample: rpclab's CPU,
	// which wall time on a shared host does not measure.
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(ru1.Stime.Nano()-ru0.Stime.Nano())/float64(b.N)/1e6, "sys-ms/op")
	if n := len(s.Record("ok").Conns); n < 2*pairs {
		b.Fatalf("sampled %d connections, want %d", n, 2*pairs)
	}
}
