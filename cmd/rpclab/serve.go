// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"net"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/server"
)

func newServeCmd() *cobra.Command {
	var (
		listen string
		o      server.Options
		cpus   []int
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the ping server (grpc.testing.BenchmarkService)",
		Long: `Run the ping server. It speaks grpc.testing.BenchmarkService, so ghz and the
gRPC project's benchmark clients can drive it as well as rpclab.

The first line on stdout is "listening on ADDR". SIGINT or SIGTERM stops it.`,
		Example: `  rpclab serve --listen 127.0.0.1:50051
  rpclab serve --listen :0 --cpus 1   # a free port, pinned to CPU 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(cpus) > 0 {
				if err := procstat.Pin(0, cpus); err != nil {
					return err
				}
				runtime.GOMAXPROCS(len(cpus))
			}
			lis, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			// The bulk transports listen beside it; clients learn their
			// ports from BulkService.Info.
			host, _, _ := net.SplitHostPort(lis.Addr().String())
			b, err := server.StartBulk(cmd.Context(), host)
			if err != nil {
				lis.Close()
				return err
			}
			defer b.Close()
			o.Bulk = b
			fmt.Fprintf(cmd.OutOrStdout(), "%s%s\n", server.ListeningPrefix, lis.Addr())
			return server.Serve(cmd.Context(), lis, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:50051", "address to listen on (\":0\" or \"127.0.0.1:0\" picks a free port)")
	f.Uint32Var(&o.MaxConcurrentStreams, "max-concurrent-streams", 0, "streams allowed per connection (0: unlimited)")
	f.Uint32Var(&o.NumStreamWorkers, "num-stream-workers", 0, "serve streams on this many fixed goroutines (0: a goroutine per stream)")
	f.BoolVar(&o.SharedWriteBuffer, "shared-write-buffer", false, "release each connection's write buffer between flushes")
	f.IntVar(&o.WriteBufferSize, "write-buffer", 0, "per-connection write buffer in bytes (0: grpc-go's 32 KiB)")
	f.IntVar(&o.ReadBufferSize, "read-buffer", 0, "per-connection read buffer in bytes (0: grpc-go's 32 KiB)")
	f.IntSliceVar(&cpus, "cpus", nil, "pin the server to these CPUs and set GOMAXPROCS to their count")
	return cmd
}
