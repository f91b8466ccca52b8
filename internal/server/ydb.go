// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/proto/ydbpb"
)

// Debug implements YDB's Ydb.Debug.V1.DebugService (proto/ydb/debug/v1),
// so YDB's gRPC ping benchmark can drive rpclab's server as it drives a YDB
// node: every reply carries the server's wall-clock time in CallBackTs.
type Debug struct {
	ydbpb.UnimplementedDebugServiceServer
}

var _ ydbpb.DebugServiceServer = (*Debug)(nil)

// RegisterDebug registers YDB's DebugService on s.
func RegisterDebug(s grpc.ServiceRegistrar) {
	ydbpb.RegisterDebugServiceServer(s, &Debug{})
}

// callBackTs is the server's time as YDB's ping server stamps its replies:
// microseconds since the Unix epoch.
func callBackTs() uint64 {
	return uint64(time.Now().UnixMicro())
}

// PingPlainGrpc answers one ping.
func (*Debug) PingPlainGrpc(context.Context, *ydbpb.PlainGrpcRequest) (*ydbpb.PlainGrpcResponse, error) {
	return &ydbpb.PlainGrpcResponse{CallBackTs: callBackTs()}, nil
}

// PingStream answers every ping on the stream with one reply, until the
// client closes its side (OK) or the stream breaks.
func (*Debug) PingStream(stream ydbpb.DebugService_PingStreamServer) error {
	req := &ydbpb.PlainGrpcRequest{}
	resp := &ydbpb.PlainGrpcResponse{}
	for {
		if err := stream.RecvMsg(req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		resp.CallBackTs = callBackTs()
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}
