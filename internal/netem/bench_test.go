// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"context"
	"io"
	"net"
	"testing"
)

// BenchmarkPingPong measures a 64-byte round trip on loopback directly and
// through the proxy at 0 delay: the difference is the emulator's cost.
func BenchmarkPingPong(b *testing.B) {
	echo, err := startEcho()
	if err != nil {
		b.Fatal(err)
	}
	defer echo.Close()
	p, err := Listen("127.0.0.1:0", echo.Addr().String(), Network{})
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(context.Background())
	defer p.Close()
	for _, tc := range []struct{ name, addr string }{
		{"direct", echo.Addr().String()},
		{"proxy", p.Addr().String()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := net.Dial("tcp", tc.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			buf := make([]byte, pingSize)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBulk moves 64 MiB through an echo server and back, directly and
// through the proxy.
func BenchmarkBulk(b *testing.B) {
	echo, err := startEcho()
	if err != nil {
		b.Fatal(err)
	}
	defer echo.Close()
	p, err := Listen("127.0.0.1:0", echo.Addr().String(), Network{})
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(context.Background())
	defer p.Close()
	const n = 64 << 20
	for _, tc := range []struct{ name, addr string }{
		{"direct", echo.Addr().String()},
		{"proxy", p.Addr().String()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				if err := sendRecv(context.Background(), tc.addr, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
