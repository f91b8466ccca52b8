// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/hashicorp/yamux"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rpclab/rpclab/internal/testutil"
)

const benchSize = 64 << 20

// BenchmarkTransfer moves 64 MiB each way through a sidechannel (a gRPC
// call, its hello and the bytes on the shared port) and, as the baseline,
// through a plain TCP connection opened per transfer, both on loopback in
// this process. The yamux paths are the other way to share one port,
// Gitaly's: the bytes on a stream of a yamux session over one TCP
// connection (the session made once, a stream per transfer, no gRPC call:
// the byte path alone), with yamux's default 256 KiB stream window and
// with 16 MiB. MB/s is the transfer's; allocs are both sides'.
func BenchmarkTransfer(b *testing.B) {
	for _, dir := range []string{"download", "upload"} {
		b.Run("path=tcp/dir="+dir, func(b *testing.B) { benchTCP(b, dir) })
		b.Run("path=sidechannel/dir="+dir, func(b *testing.B) { benchSidechannel(b, dir) })
		for _, w := range []uint32{256 << 10, 16 << 20} {
			b.Run(fmt.Sprintf("path=yamux-window=%dKiB/dir=%s", w>>10, dir), func(b *testing.B) { benchYamux(b, dir, w) })
		}
	}
}

func benchYamux(b *testing.B, dir string, window uint32) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer lis.Close()
	cfg := yamux.DefaultConfig()
	cfg.MaxStreamWindowSize = window
	cfg.LogOutput = io.Discard
	go func() {
		c, err := lis.Accept()
		if err != nil {
			return
		}
		sess, err := yamux.Server(c, cfg)
		if err != nil {
			return
		}
		defer sess.Close()
		buf := make([]byte, 256<<10)
		for {
			st, err := sess.Accept()
			if err != nil {
				return
			}
			if dir == "download" {
				_ = writeN(st, buf, benchSize)
			} else {
				_, _ = io.CopyBuffer(io.Discard, st, buf)
				_, _ = st.Write([]byte{1})
			}
			st.Close()
		}
	}()
	c, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	sess, err := yamux.Client(c, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	buf := make([]byte, 256<<10)
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		st, err := sess.Open()
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		if dir == "download" {
			_, _ = st.Write(nil) // yamux opens the stream on its first frame
			n, err = io.CopyBuffer(io.Discard, st, buf)
		} else {
			err = writeN(st, buf, benchSize)
			n = benchSize
			if err == nil {
				err = st.Close() // a FIN: the server's copy ends
			}
			if err == nil {
				_, err = io.ReadFull(st, buf[:1])
			}
		}
		st.Close()
		if err != nil || n != benchSize {
			b.Fatalf("yamux: %v, %d bytes", err, n)
		}
	}
}

func benchSidechannel(b *testing.B, dir string) {
	ts := startServer(b, false)
	cc, c := ts.dial(b)
	ctx := testutil.Context(b)
	go func() { // the handlers' outcomes
		for range ts.files.ended {
		}
	}()
	buf := make([]byte, 256<<10)
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		var out wrapperspb.Int64Value
		err := c.Do(ctx, func(ctx context.Context) error {
			if dir == "download" {
				return cc.Invoke(ctx, downloadMethod, wrapperspb.Int64(benchSize), &out)
			}
			return cc.Invoke(ctx, uploadMethod, wrapperspb.Int64(0), &out)
		}, func(sc *Conn) error {
			if dir == "download" {
				_, err := io.CopyBuffer(io.Discard, sc, buf)
				return err
			}
			if err := writeN(sc, buf, benchSize); err != nil {
				return err
			}
			return sc.CloseWrite()
		})
		if err != nil || out.GetValue() != benchSize {
			b.Fatalf("transfer: %v, %d bytes", err, out.GetValue())
		}
	}
}

func writeN(w io.Writer, buf []byte, n int64) error {
	for n > 0 {
		m, err := w.Write(buf[:min(int64(len(buf)), n)])
		n -= int64(m)
		if err != nil {
			return err
		}
	}
	return nil
}

func benchTCP(b *testing.B, dir string) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer lis.Close()
	go func() {
		buf := make([]byte, 256<<10)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			if dir == "download" {
				_ = writeN(c, buf, benchSize)
			} else {
				_, _ = io.CopyBuffer(io.Discard, c, buf)
				_, _ = c.Write([]byte{1})
			}
			c.Close()
		}
	}()
	buf := make([]byte, 256<<10)
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		if dir == "download" {
			n, err = io.CopyBuffer(io.Discard, c, buf)
		} else {
			err = writeN(c, buf, benchSize)
			n = benchSize
			if err == nil {
				err = c.(*net.TCPConn).CloseWrite()
			}
			if err == nil {
				_, err = c.Read(buf[:1])
			}
		}
		c.Close()
		if err != nil || n != benchSize {
			b.Fatal(fmt.Errorf("tcp: %v, %d bytes", err, n))
		}
	}
}
