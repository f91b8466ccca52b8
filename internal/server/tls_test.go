// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/server"
	pb "github.com/rpclab/rpclab/proto/benchpb"

	"github.com/rpclab/rpclab/internal/testutil"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

// With Options.TLS the server speaks TLS: a TLS client that trusts the
// certificate gets its ping answered, a plaintext client does not.
func TestServeTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	certFile, keyFile, roots := selfSigned(t, t.TempDir())
	cfg, err := server.LoadTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.LoadTLS(certFile, ""); !errors.Is(err, server.ErrBadOption) {
		t.Errorf("LoadTLS without a key = %v, want ErrBadOption", err)
	}
	if _, err := server.LoadTLS(keyFile, certFile); err == nil {
		t.Error("LoadTLS(key, cert) swapped = nil error, want one")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx, lis, server.Options{TLS: cfg}) }()
	defer func() { stop(); <-done }()

	call := func(creds credentials.TransportCredentials) error {
		cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(creds))
		if err != nil {
			return err
		}
		defer cc.Close()
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		defer ccancel()
		_, err = pb.NewBenchmarkServiceClient(cc).UnaryCall(cctx, &pb.SimpleRequest{ResponseSize: 10})
		return err
	}
	if err := call(credentials.NewTLS(&tls.Config{RootCAs: roots})); err != nil {
		t.Errorf("TLS client: %v, want the ping answered", err)
	}
	if err := call(insecure.NewCredentials()); err == nil {
		t.Error("plaintext client against the TLS server: nil error, want a failure")
	}
}
