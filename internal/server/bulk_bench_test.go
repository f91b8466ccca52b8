// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/bulkcodec"
	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/proto/bulkpb"
)

// BenchmarkTunedDownload downloads 256 MiB in 64 KiB messages from the
// grpc-tuned listener (Bulk.Download through package bulkcodec), client
// and server in this process, with grpc-go's protobuf codec on the same
// listener as the baseline: run it with -memprofile to see which of the
// allocations per message are the handler's, the codec's or grpc-go's.
func BenchmarkTunedDownload(b *testing.B) {
	const size, chunk = 256 << 20, 64 << 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bs, err := server.StartBulk(ctx, "127.0.0.1")
	if err != nil {
		b.Fatal(err)
	}
	defer bs.Close()
	info, err := bs.Info(ctx, &bulkpb.InfoRequest{})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  bool
	}{{"codec=proto", false}, {"codec=bulkcodec", true}} {
		b.Run(tc.name, func(b *testing.B) {
			opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
			if tc.raw {
				opts = append(opts, bulk.TunedDialOptions(bulk.DefaultMaxMessage)...)
			}
			cc, err := grpc.NewClient(info.GetGrpcTunedAddr(), opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			c := bulkpb.NewBulkServiceClient(cc)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				st, err := c.Download(ctx, &bulkpb.DownloadRequest{SizeBytes: size, ChunkBytes: chunk})
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				var m bulkcodec.Message
				var pm bulkpb.Chunk
				for {
					if tc.raw {
						err = st.RecvMsg(&m)
					} else {
						err = st.RecvMsg(&pm)
					}
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					if tc.raw {
						n += int64(m.Len())
						m.Free()
					} else {
						n += int64(len(pm.GetData()))
					}
				}
				if n != size {
					b.Fatalf("got %d bytes, want %d", n, size)
				}
			}
		})
	}
}
