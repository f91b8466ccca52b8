// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package selfcert_test

import (
	"crypto/tls"
	"net"
	"os"
	"testing"

	"github.com/rpclab/rpclab/internal/selfcert"
	"github.com/rpclab/rpclab/internal/testutil"
)

// TestClientTrustsExactlyItsCert: a server loading the written files is
// trusted by its own cert's client config, under the certified name only,
// and not by a client trusting another fresh certificate; the files are
// private to the owner.
func TestClientTrustsExactlyItsCert(t *testing.T) {
	ctx := testutil.LongContext(t)
	cert, err := selfcert.New("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	other, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := cert.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{certFile, keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Errorf("%s: got mode %v, want %v", f, got, want)
		}
	}
	if _, _, err := cert.WriteFiles(t.TempDir() + "/missing"); err == nil {
		t.Error("WriteFiles into a missing folder: got no error, want one")
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).HandshakeContext(ctx)
			}()
		}
	}()
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
		ok   bool
	}{
		{"its own cert, by IP", cert.ClientConfig("127.0.0.1"), true},
		{"its own cert, by DNS name", cert.ClientConfig("localhost"), true},
		{"its own cert, a name it does not hold", cert.ClientConfig("example.com"), false},
		{"another cert", other.ClientConfig("127.0.0.1"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tls.Dialer{NetDialer: &net.Dialer{}, Config: tc.cfg}
			c, err := d.DialContext(ctx, "tcp", lis.Addr().String())
			if err == nil {
				c.Close()
			}
			if got := err == nil; got != tc.ok {
				t.Errorf("got handshake ok %v (%v), want %v", got, err, tc.ok)
			}
		})
	}
}
