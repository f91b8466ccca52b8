// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/selfcert"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/sidechannel"
)

// tapProxy forwards each connection to its upstream and keeps the first
// bytes each side sent, so a test can see what crossed the wire.
type tapProxy struct {
	lis      net.Listener
	upstream string

	mu    sync.Mutex
	taps  []*tap
	conns []net.Conn // closed at cleanup, so no pipe outlives the test
	wg    sync.WaitGroup
}

// tap is one connection's bytes: up from the client, down from the server
// (the first tapKeep bytes of each).
type tap struct{ up, down capped }

const tapKeep = 256 << 10

type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := tapKeep - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

func newTapProxy(t *testing.T, upstream string) *tapProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tapProxy{lis: lis, upstream: upstream}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		lis.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *tapProxy) serve() {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		tp := &tap{}
		p.mu.Lock()
		p.taps = append(p.taps, tp)
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		pipe := func(dst, src net.Conn, keep io.Writer) {
			_, _ = io.Copy(io.MultiWriter(dst, keep), src)
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
		}
		p.wg.Go(func() {
			var both sync.WaitGroup
			both.Go(func() { pipe(u, c, &tp.up) })
			both.Go(func() { pipe(c, u, &tp.down) })
			both.Wait()
			c.Close()
			u.Close()
		})
	}
}

func (p *tapProxy) seen() []*tap {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*tap(nil), p.taps...)
}

// tlsServer serves every bulk listener and the main port over TLS with a
// fresh self-signed certificate for 127.0.0.1, in this process; it returns
// the main address and the client's config, which trusts that certificate.
func tlsServer(ctx context.Context, t *testing.T) (string, *tls.Config) {
	t.Helper()
	cert, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := cert.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := server.LoadTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	b, err := server.StartBulk(sctx, "127.0.0.1", server.WithBulkTLS(cfg))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx, lis, server.Options{Bulk: b, TLS: cfg}) }()
	t.Cleanup(func() { stop(); <-done; b.Close() })
	return lis.Addr().String(), &tls.Config{RootCAs: cert.Pool, MinVersion: tls.VersionTLS12}
}

// tlsHandshake reports whether b starts with a TLS handshake record
// (content type 22, version 3.x).
func tlsHandshake(b []byte) bool { return len(b) >= 3 && b[0] == 0x16 && b[1] == 0x03 }

// TestEveryTransportOverTLS downloads through every transport over TLS,
// with a proxy in front of each listener that keeps what crossed the wire:
// every step is ok (length and CRC-32C checked) and says tls, every
// connection through the proxies opened with a TLS handshake (the
// sidechannel's right after its magic), and no 4 KiB run of the stream
// ever crossed in the clear.
func TestEveryTransportOverTLS(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	target, clientTLS := tlsServer(ctx, t)

	const size = 4 << 20
	for _, tr := range bulk.Transports {
		t.Run(tr, func(t *testing.T) {
			var proxies []*tapProxy
			o := bulk.Options{TLS: clientTLS, Via: func(_ context.Context, _, addr string) (string, error) {
				p := newTapProxy(t, addr)
				proxies = append(proxies, p)
				return p.lis.Addr().String(), nil
			}}
			spec := &bulk.Spec{Target: target, Transports: []string{tr}, Sizes: []int64{size}, Chunks: []int{64 << 10}, Warmup: 0}
			var recs []result.BulkRecord
			if err := bulk.Run(ctx, spec, o, func(r *result.BulkRecord) error { recs = append(recs, *r); return nil }); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(recs) != 1 || recs[0].Status != result.StatusOK || recs[0].Bytes != size || !recs[0].Spec.TLS {
				t.Fatalf("got %+v, want one ok record of %d bytes with spec.tls", recs, size)
			}
			clear := bulk.Stream(1<<20, 4<<10) // a run of the stream any plaintext download of size carries
			var conns int
			for _, p := range proxies {
				for _, tp := range p.seen() {
					up, down := tp.up.bytes(), tp.down.bytes()
					if len(up) == 0 {
						continue // opened and closed unused
					}
					conns++
					hello := up
					if tr == bulk.Sidechannel && bytes.HasPrefix(up, []byte(sidechannel.Magic)) {
						hello = up[len(sidechannel.Magic):]
					}
					if !tlsHandshake(hello) {
						t.Errorf("a connection to %s began with %q, want a TLS handshake record", p.upstream, up[:min(len(up), 16)])
					}
					if bytes.Contains(down, clear) {
						t.Errorf("a connection to %s carried the stream's bytes in the clear", p.upstream)
					}
				}
			}
			if conns == 0 {
				t.Errorf("no connection crossed the proxies, want the %s download's", tr)
			}
		})
	}
}

// TestTLSMismatchFailsClearly: a client that trusts another certificate,
// and a plaintext client, against a TLS server; and a TLS client against a
// plaintext server: each run ends at once with an error naming the cause,
// not a hang and not a record.
func TestTLSMismatchFailsClearly(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	tlsTarget, _ := tlsServer(ctx, t)
	plain := startServer(ctx, t)
	other, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		target string
		tls    *tls.Config
		want   string
	}{
		{"another certificate", tlsTarget, other.ClientConfig(""), "certificate"},
		{"plaintext client, TLS server", tlsTarget, nil, "does not answer"},
		{"TLS client, plaintext server", plain.Addr, other.ClientConfig(""), "over TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &bulk.Spec{Target: tc.target, Transports: []string{bulk.TCP}, Sizes: []int64{1 << 20}, Chunks: []int{64 << 10}}
			var n int
			err := bulk.Run(ctx, spec, bulk.Options{TLS: tc.tls}, func(*result.BulkRecord) error { n++; return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("got %v, want an error naming %q", err, tc.want)
			}
			if n != 0 {
				t.Errorf("got %d records, want none", n)
			}
		})
	}
}
