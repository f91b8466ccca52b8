// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package dyncall

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rpclab/rpclab/internal/limitread"
)

// Conn is how to reach the user's service: transport security and the
// metadata sent with every call.
type Conn struct {
	// TLS turns on TLS (default: plaintext).
	TLS bool
	// CACert is a PEM file of roots to trust (default: the system roots).
	CACert string
	// InsecureSkipVerify accepts any server certificate (testing only).
	InsecureSkipVerify bool
	// Authority overrides the :authority header and the name the
	// certificate is checked against.
	Authority string
	// Headers are "key=value" metadata pairs added to every call.
	Headers []string
}

// LoadCACert reads a PEM file of CA certificates, within MaxCACertBytes,
// into a pool of roots to trust. A file without a PEM certificate is an
// error naming it.
func LoadCACert(path string) (*x509.CertPool, error) {
	pem, err := limitread.ReadFile(path, MaxCACertBytes)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

// DialOptions returns the grpc.DialOptions for c. They come after any
// plaintext default, so their transport credentials win.
func (c Conn) DialOptions() ([]grpc.DialOption, error) {
	var opts []grpc.DialOption
	if !c.TLS && (c.CACert != "" || c.InsecureSkipVerify) {
		return nil, fmt.Errorf("dyncall: --cacert and --insecure-skip-verify need --tls")
	}
	if c.TLS {
		cfg := &tls.Config{InsecureSkipVerify: c.InsecureSkipVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // asked for by flag
		if c.CACert != "" {
			pool, err := LoadCACert(c.CACert)
			if err != nil {
				return nil, fmt.Errorf("dyncall: --cacert: %w", err)
			}
			cfg.RootCAs = pool
		}
		if c.Authority != "" {
			cfg.ServerName = strings.Split(c.Authority, ":")[0]
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if c.Authority != "" {
		opts = append(opts, grpc.WithAuthority(c.Authority))
	}
	if len(c.Headers) > 0 {
		md := metadata.MD{}
		for _, h := range c.Headers {
			k, v, ok := strings.Cut(h, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			if !ok || k == "" {
				return nil, fmt.Errorf("dyncall: --header %q: want key=value", h)
			}
			md.Append(k, v)
		}
		// The pairs are set once; each call copies no per-call metadata map
		// beyond what gRPC does itself.
		kv := make([]string, 0, 2*md.Len())
		for k, vs := range md {
			for _, v := range vs {
				kv = append(kv, k, v)
			}
		}
		opts = append(opts,
			grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, o ...grpc.CallOption) error {
				return invoker(metadata.AppendToOutgoingContext(ctx, kv...), method, req, reply, cc, o...)
			}),
			grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, o ...grpc.CallOption) (grpc.ClientStream, error) {
				return streamer(metadata.AppendToOutgoingContext(ctx, kv...), desc, cc, method, o...)
			}))
	}
	return opts, nil
}

// ResolveAt dials target with c, resolves call (through files, or the
// server's reflection when files is nil) and closes the connection. A TLS
// handshake failure or an unreachable target ends it when ctx does.
func ResolveAt(ctx context.Context, target string, c Conn, files *protoregistry.Files, call string) (*Method, error) {
	if files != nil {
		return Find(files, call)
	}
	opts, err := c.DialOptions()
	if err != nil {
		return nil, err
	}
	cc, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("dyncall: %s: %w", target, err)
	}
	defer cc.Close()
	m, err := Resolve(ctx, cc, nil, call)
	if err != nil && status.Code(errors.Unwrap(err)) == codes.Unavailable {
		return nil, fmt.Errorf("%w (is it up, and does it speak TLS if and only if --tls is given?)", err)
	}
	return m, err
}
