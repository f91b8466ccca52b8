// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rpclab/rpclab/internal/testutil"
)

const (
	downloadMethod = "/sidechannel.test.Files/Download"
	uploadMethod   = "/sidechannel.test.Files/Upload"
)

// files is the test service: Download writes the requested number of
// bytes of pattern on the call's sidechannel, Upload reads its sidechannel
// to the end; both answer with the count. Every handler's outcome goes to
// ended.
type files struct {
	sc    *Server
	ended chan error
}

// pattern is the byte at offset i of every download.
func pattern(i int64) byte { return byte(i*7 + i>>11) }

var patternBuf = func() []byte {
	b := make([]byte, 256<<10)
	for i := range b {
		b[i] = pattern(int64(i))
	}
	return b
}()

func (f *files) download(ctx context.Context, size int64) (*wrapperspb.Int64Value, error) {
	sc, err := f.sc.Accept(ctx)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	var sent int64
	for sent < size {
		// Offsets restart every len(patternBuf); pattern is periodic in it.
		off := sent % int64(len(patternBuf))
		n := min(int64(len(patternBuf))-off, size-sent)
		m, err := sc.Write(patternBuf[off : off+n])
		sent += int64(m)
		if err != nil {
			return nil, StatusError(err)
		}
	}
	if err := sc.Close(); err != nil {
		return nil, StatusError(err)
	}
	return wrapperspb.Int64(sent), nil
}

func (f *files) upload(ctx context.Context) (*wrapperspb.Int64Value, error) {
	sc, err := f.sc.Accept(ctx)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	n, err := io.Copy(io.Discard, sc)
	if err != nil {
		return nil, StatusError(err)
	}
	return wrapperspb.Int64(n), nil
}

func unary(name string, h func(f *files, ctx context.Context, in *wrapperspb.Int64Value) (*wrapperspb.Int64Value, error)) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.Int64Value)
		if err := dec(in); err != nil {
			return nil, err
		}
		f := srv.(*files)
		out, err := h(f, ctx, in)
		f.ended <- err
		return out, err
	}}
}

var filesDesc = grpc.ServiceDesc{
	ServiceName: "sidechannel.test.Files",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		unary("Download", func(f *files, ctx context.Context, in *wrapperspb.Int64Value) (*wrapperspb.Int64Value, error) {
			return f.download(ctx, in.GetValue())
		}),
		unary("Upload", func(f *files, ctx context.Context, _ *wrapperspb.Int64Value) (*wrapperspb.Int64Value, error) {
			return f.upload(ctx)
		}),
	},
}

// testServer is a gRPC server and its sidechannels on one loopback port.
type testServer struct {
	addr  string
	sc    *Server
	files *files
	tls   *tls.Config // the client's, nil for plaintext
}

// startServer serves on 127.0.0.1:0 until the test ends; secure adds TLS
// to gRPC and the sidechannel with one self-signed certificate.
func startServer(t testing.TB, secure bool, opts ...Option) *testServer {
	t.Helper()
	lis := testutil.Listen(t)
	ts := &testServer{addr: lis.Addr().String()}
	var gopts []grpc.ServerOption
	if secure {
		srvCfg, cliCfg := selfSigned(t)
		ts.tls = cliCfg
		opts = append([]Option{WithTLS(srvCfg)}, opts...)
		gopts = append(gopts, grpc.Creds(credentials.NewTLS(srvCfg)))
	}
	var err error
	ts.sc, err = NewServer(lis, opts...)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ts.files = &files{sc: ts.sc, ended: make(chan error, 64)}
	gs := grpc.NewServer(gopts...)
	gs.RegisterService(&filesDesc, ts.files)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = gs.Serve(ts.sc.Listener())
	}()
	t.Cleanup(func() {
		gs.Stop()
		ts.sc.Close()
		wg.Wait()
	})
	return ts
}

// dial returns a gRPC connection and a sidechannel client to ts.
func (ts *testServer) dial(t testing.TB) (*grpc.ClientConn, *Client) {
	t.Helper()
	creds := insecure.NewCredentials()
	var opts []Option
	if ts.tls != nil {
		creds = credentials.NewTLS(ts.tls)
		opts = append(opts, WithTLS(ts.tls))
	}
	cc, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	t.Cleanup(func() { cc.Close() })
	c, err := NewClient(ts.addr, opts...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return cc, c
}

// download fetches size bytes over a sidechannel, checks them against
// pattern and returns how many the call says it sent.
func download(ctx context.Context, cc *grpc.ClientConn, c *Client, size int64) (got, sent int64, err error) {
	var out wrapperspb.Int64Value
	err = c.Do(ctx, func(ctx context.Context) error {
		return cc.Invoke(ctx, downloadMethod, wrapperspb.Int64(size), &out)
	}, func(sc *Conn) error {
		buf := make([]byte, 64<<10)
		for {
			n, err := sc.Read(buf)
			for i := range buf[:n] {
				if buf[i] != pattern((got+int64(i))%int64(len(patternBuf))) {
					return errors.New("corrupt byte")
				}
			}
			got += int64(n)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	return got, out.GetValue(), err
}

// selfSigned returns a server and a client TLS configuration for one
// self-signed certificate of 127.0.0.1.
func selfSigned(t testing.TB) (srv, cli *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sidechannel test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS13}
	cli = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
	return srv, cli
}

// waitGoroutines waits until at most want goroutines run, or fails when
// ctx ends.
func waitGoroutines(ctx context.Context, t testing.TB, want int) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		got := runtime.NumGoroutine()
		if got <= want {
			return
		}
		select {
		case <-ctx.Done():
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: got %d, want at most %d\n%s", got, want, buf[:runtime.Stack(buf, true)])
		case <-tick.C:
		}
	}
}
