// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package pooltest holds what the pool's tests share: bounded contexts, a
// gRPC benchmark server on loopback, and a count of this process's TCP
// connections as the kernel sees them. It imports grpc-go and the standard
// library only, so the pool module's tests need nothing else.
package pooltest

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	pb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// DefaultTimeout bounds a test's waits.
const DefaultTimeout = 30 * time.Second

// Context ends with the test, or after DefaultTimeout.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	t.Cleanup(cancel)
	return ctx
}

// Listen listens on a free loopback port; the test fails if it cannot.
// Whoever serves on it closes it.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// MaxPayload bounds a response's size.
const MaxPayload = 1 << 20

var zeros = make([]byte, MaxPayload)

// Ping is grpc.testing.BenchmarkService answering at once: a response of
// the requested size for each request. Hold, when not nil, is called
// before each unary answer, with the RPC's context: a test holds calls
// open with it.
type Ping struct {
	pb.UnimplementedBenchmarkServiceServer
	Hold func(ctx context.Context)
}

func response(req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	n := req.GetResponseSize()
	if n < 0 || n > MaxPayload {
		return nil, status.Errorf(codes.InvalidArgument, "response_size %d is outside 0..%d", n, MaxPayload)
	}
	return &pb.SimpleResponse{Payload: &pb.Payload{Body: zeros[:n]}}, nil
}

// UnaryCall answers one request.
func (s *Ping) UnaryCall(ctx context.Context, req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	if s.Hold != nil {
		s.Hold(ctx)
	}
	return response(req)
}

// StreamingCall answers every request on the stream with one response.
func (s *Ping) StreamingCall(stream pb.BenchmarkService_StreamingCallServer) error {
	for {
		req, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		resp, err := response(req)
		if err != nil {
			return err
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// NewServer is a gRPC server with Ping registered.
func NewServer(ping *Ping, opts ...grpc.ServerOption) *grpc.Server {
	if ping == nil {
		ping = &Ping{}
	}
	s := grpc.NewServer(opts...)
	pb.RegisterBenchmarkServiceServer(s, ping)
	return s
}

// Serve serves s on a free loopback port until the test ends (then it
// stops s and waits for Serve to return) and returns its address.
func Serve(t testing.TB, s *grpc.Server) string {
	t.Helper()
	lis := Listen(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(lis)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	return lis.Addr().String()
}

// ConnsTo counts this process's established TCP connections whose peer is
// addr ("127.0.0.1:port"), as the kernel sees them: the socket inodes of
// /proc/self/fd matched against /proc/net/tcp and tcp6.
func ConnsTo(addr string) (int, error) {
	want, err := netip.ParseAddrPort(addr)
	if err != nil {
		return 0, fmt.Errorf("pooltest: address %q: %w", addr, err)
	}
	want = netip.AddrPortFrom(want.Addr().Unmap(), want.Port())
	inodes, err := socketInodes()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		c, err := countInTable(f, inodes, want)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		n += c
	}
	return n, nil
}

func socketInodes() (map[string]bool, error) {
	const dir = "/proc/self/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("pooltest: list own descriptors: %w", err)
	}
	m := map[string]bool{}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed while we looked
		}
		if s, ok := strings.CutPrefix(l, "socket:["); ok {
			m[strings.TrimSuffix(s, "]")] = true
		}
	}
	return m, nil
}

// tcpEstablished is the state code of ESTABLISHED in /proc/net/tcp.
const tcpEstablished = "01"

func countInTable(path string, inodes map[string]bool, want netip.AddrPort) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	n := 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(fs) < 10 || fs[3] != tcpEstablished || !inodes[fs[9]] {
			continue
		}
		if rem, err := parseHexAddr(fs[2]); err == nil && rem == want {
			n++
		}
	}
	return n, sc.Err()
}

// parseHexAddr parses /proc/net/tcp's "0100007F:C350": the address as
// 32-bit words in host (little-endian) order, then the port in hex.
func parseHexAddr(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("pooltest: bad address %q", s)
	}
	raw, err := hex.DecodeString(a)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("pooltest: bad address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("pooltest: bad port %q", s)
	}
	ip, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}
