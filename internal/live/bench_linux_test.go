// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"net"
	"os"
	"testing"

	"github.com/rpclab/rpclab/internal/testutil"
)

// BenchmarkSample takes one sample of this process holding 10,000
// established TCP sockets (5,000 loopback connections, both ends): the
// cost of a sample of a busy client, in rpclab's time.
func BenchmarkSample(b *testing.B) {
	lis := testutil.Listen(b)
	const pairs = 5000
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
			b.Skip("cannot open 5000 connections:", err)
		}
		s := <-accepted
		b.Cleanup(func() { c.Close(); s.Close() })
	}
	ctx := testutil.Context(b)
	s, err := Open(ctx, os.Getpid(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for b.Loop() {
		if err := s.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := len(s.Record("ok").Conns); n < 2*pairs {
		b.Fatalf("sampled %d connections, want %d", n, 2*pairs)
	}
}
