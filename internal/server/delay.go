// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// think waits d, or until ctx ends: a timer, so the wait uses no CPU.
func think(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// delayUnary holds every unary RPC for d before its handler answers.
func delayUnary(d time.Duration) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := think(ctx, d); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

// delayStream holds every message a streaming handler sends for d: on a
// ping-pong stream each exchange waits d, as each unary RPC does.
func delayStream(d time.Duration) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		return h(srv, &delayedStream{ServerStream: ss, d: d})
	}
}

// delayedStream is a grpc.ServerStream whose sends wait d first.
type delayedStream struct {
	grpc.ServerStream
	d time.Duration
}

// SendMsg waits d, then sends m.
func (s *delayedStream) SendMsg(m any) error {
	if err := think(s.Context(), s.d); err != nil {
		return err
	}
	return s.ServerStream.SendMsg(m)
}
