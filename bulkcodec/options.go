// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec

import (
	"google.golang.org/grpc"
)

// ReadBufferSize is the client's read buffer in DialOptions: grpc-go reads
// the socket 32 KiB at a time by default; reading 1 MiB per read(2)
// measured about 10% less client CPU per GiB (0.43 to 0.38 s/GiB) in
// rpclab bulk's ablation, client and server pinned apart (docs/bulk.md).
// BenchmarkOptions, with both sides in one process on a shared 2-core
// machine, cannot resolve an effect that small (one run: 1961 cpu-ms/GiB
// for both sides without it, 2061 with it).
const ReadBufferSize = 1 << 20

// DialOptions are the client settings that measured a gain for bulk
// downloads: the codec on every call, and a larger read buffer.
//
// Left out, with the figures of one BenchmarkOptions run (64 MiB in
// 64 KiB messages, machine shared): fixed 4 MiB windows cost the same CPU
// (1948 against 1961 cpu-ms/GiB) and cut allocations per download by 29%
// (8244 against 11619: grpc-go's BDP pings stop), but a fixed window caps
// what a long fat link can carry, where the BDP estimator's growth is what
// fills it; docs/bulk.md found no effect of 16/64 MiB windows on loopback.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithReadBufferSize(ReadBufferSize),
		grpc.WithDefaultCallOptions(grpc.CallContentSubtype(Name)),
	}
}

// ServerOptions are the server settings that measured a gain for bulk
// downloads: none. The codec is chosen by the client's content-subtype;
// larger write buffers (64 KiB and 1 MiB, docs/bulk.md; 1 MiB in
// BenchmarkOptions: 1958 against 1961 cpu-ms/GiB) and windows saved
// nothing, and no write buffer doubled the CPU. It exists so that a
// service can adopt what a later measurement finds without changing its
// code.
func ServerOptions() []grpc.ServerOption { return nil }
