// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"google.golang.org/grpc"

	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/ydbpb"
)

// Service is the ping service a sweep drives, as --service and the
// record's spec.service spell it.
type Service string

// Ping services.
const (
	// Benchmark is grpc.testing.BenchmarkService (UnaryCall, StreamingCall),
	// which every rpclab server and client speaks; the default.
	Benchmark Service = "benchmark"
	// YDBDebug is YDB's Ydb.Debug.V1.DebugService (PingPlainGrpc unary,
	// PingStream bidi; empty requests, no payload), as YDB's gRPC ping
	// benchmark and a YDB node speak it.
	YDBDebug Service = "ydb-debug"
)

// Services lists the services a sweep can drive.
var Services = []Service{Benchmark, YDBDebug}

// ParseService parses --service ("" is Benchmark).
func ParseService(s string) (Service, error) {
	switch sv := Service(s); sv {
	case "", Benchmark:
		return Benchmark, nil
	case YDBDebug:
		return YDBDebug, nil
	default:
		return "", usageErr(ErrService, "unknown service %q (want %s or %s)", s, Benchmark, YDBDebug)
	}
}

// RecordName is the service as a record's spec.service holds it: empty
// (the key absent) for Benchmark, the default.
func (s Service) RecordName() string {
	if s == "" || s == Benchmark {
		return ""
	}
	return string(s)
}

// ping is what a caller of a service sends: the unary method, the bidi
// stream, and the request (shared by every caller: it is only read).
type ping struct {
	unary, streaming string
	desc             *grpc.StreamDesc
	req              any
}

var (
	benchStream = grpc.StreamDesc{StreamName: "StreamingCall", ServerStreams: true, ClientStreams: true}
	ydbStream   = grpc.StreamDesc{StreamName: "PingStream", ServerStreams: true, ClientStreams: true}
)

// Full method names of YDB's DebugService calls.
const (
	ydbUnaryMethod     = "/Ydb.Debug.V1.DebugService/PingPlainGrpc"
	ydbStreamingMethod = "/Ydb.Debug.V1.DebugService/PingStream"
)

// pingOf is s's ping; body is BenchmarkService's payload (YDB's request
// has none).
func pingOf(s Service, body []byte) ping {
	if s == YDBDebug {
		return ping{unary: ydbUnaryMethod, streaming: ydbStreamingMethod, desc: &ydbStream, req: &ydbpb.PlainGrpcRequest{}}
	}
	return ping{unary: unaryMethod, streaming: streamingMethod, desc: &benchStream, req: pingRequest(len(body), body)}
}

// newResp is a reply for one caller of p to receive into.
func (p ping) newResp() any {
	if p.unary == ydbUnaryMethod {
		return &ydbpb.PlainGrpcResponse{}
	}
	return &pb.SimpleResponse{}
}
