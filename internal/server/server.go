// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package server holds rpclab's services: the ping service, wire-compatible
// with grpc.testing.BenchmarkService, and the code that runs a server, in
// this process or as a separate child process.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/limitread"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// MaxDelay bounds Options.Delay: a think time is a fraction of an RPC's
// deadline, and a longer one reads as a hung server.
const MaxDelay = 10 * time.Second

// MaxPayload bounds the response size a request may ask for.
const MaxPayload = 64 << 20

// Options are the grpc-go server settings that matter for ping throughput.
// The zero value is grpc-go's defaults.
type Options struct {
	// MaxConcurrentStreams caps the streams per connection (0: grpc-go's
	// default, unlimited).
	MaxConcurrentStreams uint32 `json:"max_concurrent_streams,omitempty"`
	// Delay is a think time before every reply, of every service served
	// (0: none). It is a timer, not work: a delayed RPC uses no CPU, so with
	// MaxConcurrentStreams N one connection carries at most N/Delay RPCs a
	// second, a known answer for a connection limit. At most MaxDelay.
	Delay time.Duration `json:"delay,omitempty"`
	// NumStreamWorkers serves streams on a fixed pool of goroutines instead
	// of one new goroutine per stream (0: a goroutine per stream).
	NumStreamWorkers uint32 `json:"num_stream_workers,omitempty"`
	// WriteBufferSize and ReadBufferSize set the per-connection buffers in
	// bytes (0: grpc-go's default of 32 KiB).
	WriteBufferSize int `json:"write_buffer_size,omitempty"`
	ReadBufferSize  int `json:"read_buffer_size,omitempty"`
	// Bulk is the bulk service to register beside the ping service (nil: one
	// without the extra bulk listeners and without a sidechannel). Serve
	// splits its listener for Bulk's sidechannel (package sidechannel).
	Bulk *Bulk `json:"-"`
	// TLS serves with TLS (nil: plaintext). LoadTLS builds one from a
	// certificate and key file.
	TLS *tls.Config `json:"-"`
}

// MaxPEMBytes bounds each file LoadTLS reads: a certificate chain and its
// key are a few KiB.
const MaxPEMBytes = 1 << 20

// LoadTLS reads a PEM certificate (chain) and its key for Options.TLS,
// each within MaxPEMBytes.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("%w: TLS needs both a certificate and a key file", ErrBadOption)
	}
	certPEM, err := limitread.ReadFile(certFile, MaxPEMBytes)
	if err != nil {
		return nil, fmt.Errorf("server: TLS: %w", err)
	}
	keyPEM, err := limitread.ReadFile(keyFile, MaxPEMBytes)
	if err != nil {
		return nil, fmt.Errorf("server: TLS: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("server: TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ServerOptions turns o into grpc.ServerOptions.
func (o Options) ServerOptions() []grpc.ServerOption {
	var opts []grpc.ServerOption
	if o.MaxConcurrentStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(o.MaxConcurrentStreams))
	}
	if o.NumStreamWorkers > 0 {
		opts = append(opts, grpc.NumStreamWorkers(o.NumStreamWorkers))
	}
	if o.WriteBufferSize > 0 {
		opts = append(opts, grpc.WriteBufferSize(o.WriteBufferSize))
	}
	if o.ReadBufferSize > 0 {
		opts = append(opts, grpc.ReadBufferSize(o.ReadBufferSize))
	}
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	if o.Delay > 0 {
		opts = append(opts, grpc.ChainUnaryInterceptor(delayUnary(o.Delay)), grpc.ChainStreamInterceptor(delayStream(o.Delay)))
	}
	return opts
}

// New returns a grpc.Server with the ping service registered.
func New(o Options, extra ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(append(o.ServerOptions(), extra...)...)
	pb.RegisterBenchmarkServiceServer(s, &Ping{})
	RegisterBulk(s, o.Bulk)
	RegisterDebug(s)
	RegisterUsage(s)
	reflection.Register(s) // so rpclab sweep --call and other tools can list the services
	return s
}

// Serve serves the ping service on lis until ctx ends, then stops the server
// gracefully (in-flight RPCs finish, streams are cancelled). With o.Bulk,
// lis is split between gRPC and the bulk sidechannel (sidechannel.NewServer):
// a sidechannel download comes through the same port as its call.
func Serve(ctx context.Context, lis net.Listener, o Options) error {
	if o.Bulk != nil {
		sc, err := o.Bulk.listen(lis, o.TLS)
		if err != nil {
			lis.Close()
			return err
		}
		defer sc.Close()
		lis = sc.Listener()
	}
	s := New(o)
	done := make(chan error, 1)
	go func() { done <- s.Serve(lis) }()
	select {
	case err := <-done:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
		s.Stop()
		<-done
		return nil
	}
}

// Ping implements grpc.testing.BenchmarkService. Every response carries
// response_size zero bytes; the body is shared and never written, so a
// response costs no payload allocation on the server.
type Ping struct {
	pb.UnimplementedBenchmarkServiceServer
}

var _ pb.BenchmarkServiceServer = (*Ping)(nil)

var zeros = make([]byte, MaxPayload)

func response(req *pb.SimpleRequest, resp *pb.SimpleResponse) error {
	n := req.GetResponseSize()
	if n < 0 || n > MaxPayload {
		return status.Errorf(codes.InvalidArgument, "response_size %d is outside 0..%d", n, MaxPayload)
	}
	if resp.Payload == nil {
		resp.Payload = &pb.Payload{}
	}
	resp.Payload.Body = zeros[:n]
	return nil
}

// UnaryCall answers one request.
func (*Ping) UnaryCall(_ context.Context, req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	resp := &pb.SimpleResponse{}
	if err := response(req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// StreamingCall answers every request on the stream with one response.
func (*Ping) StreamingCall(stream pb.BenchmarkService_StreamingCallServer) error {
	req := &pb.SimpleRequest{}
	resp := &pb.SimpleResponse{}
	for {
		if err := stream.RecvMsg(req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := response(req, resp); err != nil {
			return err
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// StreamingFromClient reads requests until the client closes its side, then
// answers once.
func (*Ping) StreamingFromClient(stream pb.BenchmarkService_StreamingFromClientServer) error {
	req := &pb.SimpleRequest{}
	resp := &pb.SimpleResponse{}
	for {
		if err := stream.RecvMsg(req); err != nil {
			if errors.Is(err, io.EOF) {
				if err := response(req, resp); err != nil {
					return err
				}
				return stream.SendAndClose(resp)
			}
			return err
		}
	}
}

// StreamingFromServer sends responses until the client cancels.
func (*Ping) StreamingFromServer(req *pb.SimpleRequest, stream pb.BenchmarkService_StreamingFromServerServer) error {
	resp := &pb.SimpleResponse{}
	if err := response(req, resp); err != nil {
		return err
	}
	for {
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// StreamingBothWays reads and sends independently until the client cancels.
func (*Ping) StreamingBothWays(stream pb.BenchmarkService_StreamingBothWaysServer) error {
	errc := make(chan error, 1)
	go func() {
		req := &pb.SimpleRequest{}
		for {
			if err := stream.RecvMsg(req); err != nil {
				errc <- err
				return
			}
		}
	}()
	resp := &pb.SimpleResponse{Payload: &pb.Payload{}}
	for {
		select {
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		default:
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}
