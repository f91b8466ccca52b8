// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// checkTarget checks that a host:port target (optionally "dns:///" or
// "passthrough:///" in front) can be dialled as written; targets of other
// schemes (unix:, xds:) are left to grpc-go.
func checkTarget(target string) error {
	addr := target
	if scheme, rest, ok := strings.Cut(target, "://"); ok {
		if scheme != "dns" && scheme != "passthrough" {
			return nil
		}
		addr = strings.TrimPrefix(rest, "/")
		if i := strings.IndexByte(addr, '/'); scheme == "dns" && i >= 0 {
			addr = addr[i+1:] // dns://authority/host:port
		}
	} else if strings.HasPrefix(target, "unix:") {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: %q: want host:port (%v)", ErrBadTarget, target, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("%w: %q: unknown port %q", ErrBadTarget, target, port)
		}
		return nil
	}
	if n < 1 || n > 65535 {
		return fmt.Errorf("%w: %q: port %d is outside 1..65535", ErrBadTarget, target, n)
	}
	return nil
}

// probeMethod is called only to read why a connection failed: an RPC on a
// connection in TRANSIENT_FAILURE fails at once with the last connection
// error. Should the connection be ready by then, the server answers
// Unimplemented and nothing else happens.
const probeMethod = "/rpclab.Probe/WhyNotConnected"

// probe opens one connection to target and waits until it is ready (nil),
// fails with a known cause (an error wrapping ErrUnreachable that names
// it), or ctx ends (ctx's error).
func probe(ctx context.Context, target string, dial []grpc.DialOption) error {
	cc, err := grpc.NewClient(target, dial...)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	defer cc.Close()
	cc.Connect()
	for {
		st := cc.GetState()
		switch st {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure:
			return fmt.Errorf("%w: %s", ErrUnreachable, dialCause(ctx, cc, target))
		case connectivity.Idle:
			cc.Connect()
		}
		if !cc.WaitForStateChange(ctx, st) {
			return ctx.Err()
		}
	}
}

// dialCause reads the last connection error of cc (in TRANSIENT_FAILURE)
// and says in words what it means where that is known.
func dialCause(ctx context.Context, cc *grpc.ClientConn, target string) string {
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err := cc.Invoke(rctx, probeMethod, &pb.SimpleRequest{}, &pb.SimpleResponse{})
	msg := "the connection failed"
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unavailable {
		msg = s.Message()
	}
	for _, c := range dialCauses {
		for _, sub := range c.match {
			if strings.Contains(msg, sub) {
				return fmt.Sprintf("%s: %s (%s)", target, c.says, msg)
			}
		}
	}
	return fmt.Sprintf("%s: %s", target, msg)
}

// dialCauses name what grpc-go's connection errors mean.
var dialCauses = []struct {
	match []string
	says  string
}{
	{[]string{"connection refused"}, "connection refused: nothing listens there"},
	{[]string{"no such host", "produced zero addresses"}, "no such host"},
	{[]string{"too many open files"}, "out of file descriptors"},
	{[]string{"first record does not look like a TLS handshake", "tls: "}, "the TLS handshake failed: the server may not use TLS, or its certificate is not trusted"},
	{[]string{"HTTP/1"}, "an HTTP/1 server answers there, not a gRPC server"},
	{[]string{"connection reset by peer", "EOF"}, "the server closed the connection during the handshake"},
	{[]string{"error reading server preface", "http2: "}, "the server does not speak gRPC over HTTP/2 (or it expects TLS where the client dialled plaintext)"},
}
