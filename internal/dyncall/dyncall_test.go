// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package dyncall_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/limitread"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// plainServer serves the ping service without reflection, and remembers
// the metadata of the last call.
type plainServer struct {
	pb.UnimplementedBenchmarkServiceServer
	md chan metadata.MD
}

func (p *plainServer) UnaryCall(ctx context.Context, req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	select {
	case p.md <- md:
	default:
	}
	return &pb.SimpleResponse{Payload: &pb.Payload{Body: make([]byte, req.GetResponseSize())}}, nil
}

func call(t *testing.T, target string, c dyncall.Conn, m *dyncall.Method, data string) (*pb.SimpleResponse, error) {
	t.Helper()
	opts, err := c.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	req, err := m.Request([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	resp := m.NewResponse()
	if _, err := m.Call(testutil.Context(t), cc, req, resp); err != nil {
		return nil, err
	}
	b, _ := proto.Marshal(resp)
	var out pb.SimpleResponse
	if err := proto.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out, nil
}

// TestReflection resolves the method on rpclab's own server through
// reflection and calls it with a JSON request.
func TestReflection(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	m, err := dyncall.ResolveAt(testutil.Context(t), target, dyncall.Conn{}, nil, "grpc.testing.BenchmarkService/UnaryCall")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Path, "/grpc.testing.BenchmarkService/UnaryCall"; got != want {
		t.Errorf("got path %q, want %q", got, want)
	}
	resp, err := call(t, target, dyncall.Conn{}, m, `{"response_size": 42}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(resp.GetPayload().GetBody()); got != 42 {
		t.Errorf("got a %d-byte payload, want 42", got)
	}
}

// writeProtoset writes the ping service's descriptors as protoc
// --include_imports --descriptor_set_out would.
func writeProtoset(t *testing.T) string {
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(pb.File_grpc_testing_messages_proto),
		protodesc.ToFileDescriptorProto(pb.File_grpc_testing_benchmark_service_proto),
	}}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bench.protoset")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProtosetWithoutReflection: a server without reflection is refused
// with a message pointing at --protoset, and the protoset works, with
// the --header metadata arriving.
func TestProtosetWithoutReflection(t *testing.T) {
	ps := &plainServer{md: make(chan metadata.MD, 1)}
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, ps)
	target := testutil.Serve(t, s)

	_, err := dyncall.ResolveAt(testutil.Context(t), target, dyncall.Conn{}, nil, "grpc.testing.BenchmarkService/UnaryCall")
	if err == nil || !strings.Contains(err.Error(), "--protoset") {
		t.Fatalf("got %v, want an error saying reflection is off and naming --protoset", err)
	}
	files, err := dyncall.LoadProtoset(writeProtoset(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := dyncall.ResolveAt(testutil.Context(t), target, dyncall.Conn{}, files, "grpc.testing.BenchmarkService.UnaryCall")
	if err != nil {
		t.Fatal(err)
	}
	c := dyncall.Conn{Headers: []string{"X-Tenant=blue", "trace=1"}}
	if _, err := call(t, target, c, m, `{"response_size": 3}`); err != nil {
		t.Fatal(err)
	}
	md := <-ps.md
	if got := md.Get("x-tenant"); len(got) != 1 || got[0] != "blue" {
		t.Errorf("got x-tenant %v, want [blue]", got)
	}
}

// selfSigned makes a certificate for 127.0.0.1 and "rpclab.test".
func selfSigned(t *testing.T) (tls.Certificate, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rpclab test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"rpclab.test"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kb, _ := x509.MarshalECPrivateKey(key)
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return cert, p
}

func TestTLS(t *testing.T) {
	cert, caFile := selfSigned(t)
	target := testutil.Serve(t, server.New(server.Options{}, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}}))))
	const method = "grpc.testing.BenchmarkService/UnaryCall"
	tests := []struct {
		name    string
		conn    dyncall.Conn
		wantErr string
	}{
		{"cacert", dyncall.Conn{TLS: true, CACert: caFile}, ""},
		{"cacert and authority", dyncall.Conn{TLS: true, CACert: caFile, Authority: "rpclab.test"}, ""},
		{"skip verify", dyncall.Conn{TLS: true, InsecureSkipVerify: true}, ""},
		{"unknown CA", dyncall.Conn{TLS: true}, "certificate"},
		{"wrong name", dyncall.Conn{TLS: true, CACert: caFile, Authority: "other.test"}, "certificate"},
		{"plaintext to TLS", dyncall.Conn{}, "--tls"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(testutil.Context(t), 5*time.Second)
			defer cancel()
			m, err := dyncall.ResolveAt(ctx, target, tc.conn, nil, method)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := call(t, target, tc.conn, m, `{}`); err != nil {
				t.Errorf("got %v, want a reply", err)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	tests := []struct {
		call    string
		wantErr error
		want    string
	}{
		{"grpc.testing.BenchmarkService/Nope", dyncall.ErrUnknownMethod, "UnaryCall"},
		{"grpc.testing.NoService/UnaryCall", dyncall.ErrUnknownMethod, "NoService"},
		{"nonsense", nil, "package.Service/Method"},
	}
	for _, tc := range tests {
		_, err := dyncall.ResolveAt(testutil.Context(t), target, dyncall.Conn{}, nil, tc.call)
		if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %q", tc.call, err, tc.want)
		}
	}
	m, err := dyncall.ResolveAt(testutil.Context(t), target, dyncall.Conn{}, nil, "grpc.testing.BenchmarkService/UnaryCall")
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{`{"response_size": "big"}`, `{"no_such_field": 1}`, `{`} {
		if _, err := m.Request([]byte(data)); err == nil || !strings.Contains(err.Error(), "grpc.testing.SimpleRequest") {
			t.Errorf("%s: got %v, want an error naming the message type", data, err)
		}
	}
	for _, c := range []dyncall.Conn{{Headers: []string{"novalue"}}, {CACert: "x.pem"}, {TLS: true, CACert: "/nonexistent.pem"}} {
		if _, err := c.DialOptions(); err == nil {
			t.Errorf("%+v: got nil error, want one", c)
		}
	}
	if _, err := dyncall.LoadProtoset("/nonexistent.protoset"); err == nil {
		t.Errorf("missing protoset: got nil error, want one")
	}
}

// TestProtoFileWithoutReflection compiles the repository's own .proto
// (no protoc) and calls a server that has reflection off.
func TestProtoFileWithoutReflection(t *testing.T) {
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, &plainServer{md: make(chan metadata.MD, 1)})
	target := testutil.Serve(t, s)
	files, err := dyncall.LoadProto(testutil.Context(t), []string{"grpc/testing/benchmark_service.proto"}, []string{"../../proto"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := dyncall.ResolveAt(testutil.Context(t), target, dyncall.Conn{}, files, "grpc.testing.BenchmarkService/UnaryCall")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := call(t, target, dyncall.Conn{}, m, `{"responseSize": 7}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(resp.GetPayload().GetBody()); got != 7 {
		t.Errorf("got a %d-byte payload, want 7", got)
	}
	bad := filepath.Join(t.TempDir(), "bad.proto")
	if err := os.WriteFile(bad, []byte("syntax = \"proto3\";\nmessage {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := dyncall.LoadProto(testutil.Context(t), []string{bad}, nil); err == nil || !strings.Contains(err.Error(), "bad.proto") {
		t.Errorf("got %v, want a syntax error naming bad.proto", err)
	}
}

// TestInputsAreBounded: every file dyncall reads has a stated limit: a
// device that never ends (/dev/zero) or a file past the limit is an error
// wrapping limitread.ErrTooLarge, never an endless read.
func TestInputsAreBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.protoset")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(dyncall.MaxProtosetBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	tests := []struct {
		name string
		load func() error
	}{
		{"protoset /dev/zero", func() error { _, err := dyncall.LoadProtoset("/dev/zero"); return err }},
		{"protoset past its limit", func() error { _, err := dyncall.LoadProtoset(big); return err }},
		{"proto /dev/zero", func() error { _, err := dyncall.LoadProto(testutil.Context(t), []string{"/dev/zero"}, nil); return err }},
		{"cacert /dev/zero", func() error { _, err := dyncall.Conn{TLS: true, CACert: "/dev/zero"}.DialOptions(); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.load(); !errors.Is(err, limitread.ErrTooLarge) {
				t.Errorf("got %v, want an error wrapping limitread.ErrTooLarge", err)
			}
		})
	}
}

// TestCheckCall: a --call that cannot name a method is refused without
// a server, wrapping ErrBadCall.
func TestCheckCall(t *testing.T) {
	tests := []struct {
		call string
		want error
	}{
		{"pkg.Service/Method", nil},
		{"/pkg.Service/Method", nil},
		{"pkg.Service.Method", nil},
		{"bogus", dyncall.ErrBadCall},
		{"", dyncall.ErrBadCall},
		{"pkg.Service/", dyncall.ErrBadCall},
		{"/Method", dyncall.ErrBadCall},
	}
	for _, tc := range tests {
		if err := dyncall.CheckCall(tc.call); !errors.Is(err, tc.want) {
			t.Errorf("CheckCall(%q): got %v, want %v", tc.call, err, tc.want)
		}
	}
}
