// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package selfcert makes a fresh self-signed TLS certificate in memory, for
// a server rpclab starts itself (rpclab bulk --tls): the child reads it
// from files only it and rpclab can read, and the client trusts exactly
// that certificate and no other.
package selfcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Validity is how long a certificate is valid, from an hour before New (a
// clock a little behind is no error) on.
const Validity = 24 * time.Hour

// Cert is a self-signed certificate and its ECDSA P-256 key.
type Cert struct {
	// CertPEM and KeyPEM are the certificate and its private key (SEC 1,
	// "EC PRIVATE KEY"), PEM-encoded.
	CertPEM, KeyPEM []byte
	// Pool holds the certificate alone: a client whose RootCAs it is
	// trusts this server and nothing else.
	Pool *x509.CertPool
}

// New makes a certificate for hosts (IP addresses or DNS names), valid for
// server authentication for Validity, with a fresh key and a random serial.
func New(hosts ...string) (*Cert, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("selfcert: no host to certify")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("selfcert: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("selfcert: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{Organization: []string{"rpclab"}, CommonName: "rpclab self-signed " + hosts[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("selfcert: %w", err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("selfcert: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("selfcert: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &Cert{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
		Pool:    pool,
	}, nil
}

// WriteFiles writes the certificate and the key as cert.pem and key.pem
// in dir, each readable and writable by the owner only (0600).
func (c *Cert) WriteFiles(dir string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for _, f := range []struct {
		path string
		data []byte
	}{{certFile, c.CertPEM}, {keyFile, c.KeyPEM}} {
		// O_EXCL: never write a key into a file someone else made.
		w, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", "", fmt.Errorf("selfcert: %w", err)
		}
		_, werr := w.Write(f.data)
		if err := w.Close(); werr == nil {
			werr = err
		}
		if werr != nil {
			return "", "", fmt.Errorf("selfcert: %w", werr)
		}
	}
	return certFile, keyFile, nil
}

// ClientConfig is a client TLS config that trusts c alone and checks the
// server's name against serverName (an IP address or a DNS name).
func (c *Cert) ClientConfig(serverName string) *tls.Config {
	return &tls.Config{RootCAs: c.Pool, ServerName: serverName, MinVersion: tls.VersionTLS12}
}
