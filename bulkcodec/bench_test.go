// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec

import (
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/testutil"
)

// BenchmarkOptions downloads 64 MiB in 64 KiB messages over loopback, with
// client and server in this process: grpc-go's protobuf codec as the
// baseline, then this codec alone and with each option that DialOptions
// and ServerOptions considered. It reports MB/s, the process's CPU per
// GiB moved (user+system, both sides) and the allocations.
func BenchmarkOptions(b *testing.B) {
	const size = 64 << 20
	window := int32(4 << 20)
	for _, tc := range []struct {
		name string
		raw  bool
		dial []grpc.DialOption
		srv  []grpc.ServerOption
	}{
		{name: "codec=proto/opts=none"},
		{name: "codec=bulkcodec/opts=none", raw: true},
		{name: "codec=bulkcodec/opts=readbuf=1MiB", raw: true, dial: []grpc.DialOption{grpc.WithReadBufferSize(ReadBufferSize)}},
		{name: "codec=bulkcodec/opts=window=4MiB", raw: true,
			dial: []grpc.DialOption{grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(window)},
			srv:  []grpc.ServerOption{grpc.InitialWindowSize(window), grpc.InitialConnWindowSize(window)}},
		{name: "codec=bulkcodec/opts=writebuf=1MiB", raw: true, srv: []grpc.ServerOption{grpc.WriteBufferSize(1 << 20)}},
		{name: "codec=bulkcodec/opts=DialOptions", raw: true, dial: DialOptions(), srv: ServerOptions()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cc := dial(b, startServer(b, tc.srv...), tc.dial...)
			ctx := testutil.Context(b)
			sink := func([]byte) {}
			b.SetBytes(size)
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if err := fetch(ctx, cc, size, tc.raw, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/(float64(b.N)*size/(1<<30)), "cpu-ms/GiB")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
