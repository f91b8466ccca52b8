// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"google.golang.org/grpc/codes"

	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// ClosedLoopConfig is a benchmark worker's ClientConfig for a closed loop
// of channels x outstanding unary pings of 16 bytes at target, in the
// driver's default histogram geometry (1% buckets up to 60 s).
func ClosedLoopConfig(target string, channels, outstanding int32, args ...*pb.ChannelArg) *pb.ClientConfig {
	return &pb.ClientConfig{
		ServerTargets:             []string{target},
		ClientType:                pb.ClientType_ASYNC_CLIENT,
		ClientChannels:            channels,
		OutstandingRpcsPerChannel: outstanding,
		RpcType:                   pb.RpcType_UNARY,
		LoadParams:                &pb.LoadParams{Load: &pb.LoadParams_ClosedLoop{ClosedLoop: &pb.ClosedLoopParams{}}},
		PayloadConfig:             &pb.PayloadConfig{Payload: &pb.PayloadConfig_SimpleParams{SimpleParams: &pb.SimpleProtoParams{ReqSize: 16, RespSize: 16}}},
		HistogramParams:           &pb.HistogramParams{Resolution: 0.01, MaxPossible: 60e9},
		ChannelArgs:               args,
	}
}

// BucketSum is the sum of a worker's histogram's bucket counts.
func BucketSum(d *pb.HistogramData) int64 {
	var n int64
	for _, b := range d.GetBucket() {
		n += int64(b)
	}
	return n
}

// OKCount is the count of OK RPCs a worker's mark reports.
func OKCount(s *pb.ClientStats) int64 {
	for _, r := range s.GetRequestResults() {
		if codes.Code(r.GetStatusCode()) == codes.OK {
			return r.GetCount()
		}
	}
	return 0
}
