// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import "github.com/rpclab/rpclab/internal/usage"

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
		return "", usage.Errorf(ErrService, "unknown service %q (want %s or %s)", s, Benchmark, YDBDebug)
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
