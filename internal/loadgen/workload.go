// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/result"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/ydbpb"
)

// Workload is what a step calls: one unary RPC, or one ping-pong on a
// bidi stream, per Call of one of its Callers. The load model decides
// when the calls happen and the window which are measured; a Workload
// only makes them. PingWorkload (the Benchmark and YDB Debug pings) and
// CallWorkload (any unary or server-streaming method) are Workloads.
type Workload interface {
	// NewCaller returns the state of one caller: its reply, its stream.
	NewCaller() Caller
	// Describe writes what is called into a record's spec (the ping
	// leaves it as NewRecord made it; a method sets spec.call).
	Describe(spec *result.Spec)
}

// Caller makes a Workload's calls one at a time, from one goroutine.
type Caller interface {
	// Call makes one call on cc under ctx and returns how many replies
	// it received (a ping one; a server-streaming call any number) and
	// its error. It allocates nothing beyond what grpc-go's Invoke does
	// (TestCallerAddsNoAllocations).
	Call(ctx context.Context, cc grpc.ClientConnInterface) (replies int, err error)
}

var (
	_ Workload = (*pingWorkload)(nil)
	_ Workload = (*callWorkload)(nil)
	_ Caller   = (*unaryCaller)(nil)
	_ Caller   = (*streamCaller)(nil)
	_ Caller   = (*anyCaller)(nil)
)

// Full method names of the BenchmarkService calls the workers make.
const (
	unaryMethod     = "/grpc.testing.BenchmarkService/UnaryCall"
	streamingMethod = "/grpc.testing.BenchmarkService/StreamingCall"
)

// Full method names of YDB's DebugService calls.
const (
	ydbUnaryMethod     = "/Ydb.Debug.V1.DebugService/PingPlainGrpc"
	ydbStreamingMethod = "/Ydb.Debug.V1.DebugService/PingStream"
)

var (
	benchStream = grpc.StreamDesc{StreamName: "StreamingCall", ServerStreams: true, ClientStreams: true}
	ydbStream   = grpc.StreamDesc{StreamName: "PingStream", ServerStreams: true, ClientStreams: true}
)

// PingWorkload is s's ping as rpc (Unary or Streaming) RPCs: one unary
// call, or one ping-pong on a bidi stream that each caller keeps open (a
// new one when it breaks). payloadBytes is BenchmarkService's payload
// both ways (YDB's request has none).
func PingWorkload(s Service, rpc string, payloadBytes int) Workload {
	if s == YDBDebug {
		return &pingWorkload{streaming: rpc == Streaming, unary: ydbUnaryMethod, stream: ydbStreamingMethod, desc: &ydbStream,
			req: &ydbpb.PlainGrpcRequest{}, newResp: func() any { return &ydbpb.PlainGrpcResponse{} }}
	}
	return &pingWorkload{streaming: rpc == Streaming, unary: unaryMethod, stream: streamingMethod, desc: &benchStream,
		req: pingRequest(payloadBytes, make([]byte, payloadBytes)), newResp: func() any { return &pb.SimpleResponse{} }}
}

// pingWorkload is a service's ping; its request is shared by every caller
// (it is only read).
type pingWorkload struct {
	streaming     bool
	unary, stream string
	desc          *grpc.StreamDesc
	req           any
	newResp       func() any
}

func (w *pingWorkload) NewCaller() Caller {
	if w.streaming {
		return &streamCaller{method: w.stream, desc: w.desc, req: w.req, resp: w.newResp()}
	}
	return &unaryCaller{method: w.unary, req: w.req, resp: w.newResp()}
}

func (*pingWorkload) Describe(*result.Spec) {}

// pingRequest is the BenchmarkService request asking for n bytes back.
func pingRequest(n int, body []byte) *pb.SimpleRequest {
	return &pb.SimpleRequest{ResponseSize: int32(n), Payload: &pb.Payload{Body: body}}
}

type unaryCaller struct {
	method    string
	req, resp any
}

func (c *unaryCaller) Call(ctx context.Context, cc grpc.ClientConnInterface) (int, error) {
	return 1, cc.Invoke(ctx, c.method, c.req, c.resp)
}

// streamCaller pings on one bidi stream, opened on the first call (or
// the first after it broke, or on another connection) under ctx's values
// only: a per-call deadline does not end the stream, the step's stop
// does, by closing its connections.
type streamCaller struct {
	method    string
	desc      *grpc.StreamDesc
	req, resp any
	s         grpc.ClientStream
	cc        grpc.ClientConnInterface
}

func (c *streamCaller) Call(ctx context.Context, cc grpc.ClientConnInterface) (int, error) {
	if c.s == nil || c.cc != cc {
		if _, ok := ctx.Deadline(); ok {
			ctx = context.WithoutCancel(ctx)
		}
		s, err := cc.NewStream(ctx, c.desc, c.method)
		if err != nil {
			return 0, err
		}
		c.s, c.cc = s, cc
	}
	// SendMsg reports a broken stream as io.EOF; RecvMsg then returns the
	// stream's status, so its error is the one kept.
	_ = c.s.SendMsg(c.req)
	if err := c.s.RecvMsg(c.resp); err != nil {
		c.s = nil
		if errors.Is(err, io.EOF) {
			err = status.Error(codes.Unavailable, "stream ended by the server")
		}
		return 0, err
	}
	return 1, nil
}

// CallWorkload is method m of any service, called with req (rpclab sweep
// --call, rpclab doctor): a unary call, or a server-streaming one that
// counts as one call timed to its last reply.
func CallWorkload(m *dyncall.Method, req proto.Message) Workload {
	return &callWorkload{m: m, req: req}
}

type callWorkload struct {
	m   *dyncall.Method
	req proto.Message
}

func (w *callWorkload) NewCaller() Caller {
	return &anyCaller{m: w.m, req: w.req, resp: w.m.NewResponse()}
}

func (w *callWorkload) Describe(spec *result.Spec) { spec.Call = strings.TrimPrefix(w.m.Path, "/") }

type anyCaller struct {
	m         *dyncall.Method
	req, resp proto.Message
}

func (c *anyCaller) Call(ctx context.Context, cc grpc.ClientConnInterface) (int, error) {
	return c.m.Call(ctx, cc, c.req, c.resp)
}

// countsReplies says whether w's calls may have any number of replies
// (a server-streaming method), so that a record counts them (messages).
func countsReplies(w Workload) bool {
	cw, ok := w.(*callWorkload)
	return ok && cw.m.ServerStreaming()
}

// recorder is where a caller's measured calls go: its own
// stats.Recorder (a step's fixed window) or its cell of a Live run.
type recorder interface {
	RecordErr(d time.Duration, code codes.Code, err error)
}

// callBy makes one call of c on cc under ctx that ends by deadline (none
// when zero): the per-RPC timeout of every load model.
func callBy(ctx context.Context, c Caller, cc grpc.ClientConnInterface, deadline time.Time) (int, error) {
	if deadline.IsZero() {
		return c.Call(ctx, cc)
	}
	cctx, cancel := context.WithDeadline(ctx, deadline)
	n, err := c.Call(cctx, cc)
	cancel()
	return n, err
}

// deadlineOf is the per-RPC deadline of a call meant to start at t, with
// timeout (none when timeout is 0).
func deadlineOf(t time.Time, timeout time.Duration) time.Time {
	if timeout <= 0 {
		return time.Time{}
	}
	return t.Add(timeout)
}
