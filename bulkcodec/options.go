// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec

import (
	"google.golang.org/grpc"
)

// ReadBufferSize is the client's read buffer in DialOptions: grpc-go reads
// the socket 32 KiB at a time by default; reading 1 MiB per read(2)
// measured about 10% less client CPU per GiB in rpclab bulk (docs/bulk.md).
const ReadBufferSize = 1 << 20

// DialOptions are the client settings that measured a gain for bulk
// downloads: the codec on every call, and a larger read buffer. Larger
// flow-control windows were measured and left out (BenchmarkOptions): on
// loopback and on the emulated links of rpclab bulk they moved no more
// bytes per second.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithReadBufferSize(ReadBufferSize),
		grpc.WithDefaultCallOptions(grpc.CallContentSubtype(Name)),
	}
}

// ServerOptions are the server settings that measured a gain for bulk
// downloads: none. The codec is chosen by the client's content-subtype;
// larger write buffers and windows were measured (BenchmarkOptions) and
// saved nothing. It exists so that a service can adopt what a later
// measurement finds without changing its code.
func ServerOptions() []grpc.ServerOption { return nil }
