// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"crypto/tls"
	"errors"

	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/usage"
)

// TestDialFailuresFailFastAndNameTheCause: each way a target can be wrong
// returns well within the dial timeout with a message naming what is
// wrong, instead of waiting it out to say "context deadline exceeded"
// (issue 16). Real loopback listeners throughout.
func TestDialFailuresFailFastAndNameTheCause(t *testing.T) {
	plain := testutil.Serve(t, server.New(server.Options{}))
	h1 := testutil.Listen(t)
	hs := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}
	go hs.Serve(h1)
	t.Cleanup(func() { hs.Close() })
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	tlsCreds := grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}))

	tests := []struct {
		name   string
		target string
		conn   ConnMode
		dial   []grpc.DialOption
		// usage: the target is refused before any dial, as a usage error.
		usage bool
		want  []string
	}{
		{name: "connection refused", target: testutil.ClosedAddr(t), want: []string{"connection refused"}},
		{name: "bad host name", target: "no-such-host.invalid:50051", want: []string{"no such host"}},
		{name: "missing port", target: "127.0.0.1", usage: true, want: []string{"missing port", "host:port"}},
		{name: "port out of range", target: "127.0.0.1:99999", usage: true, want: []string{"99999", "1..65535"}},
		{name: "HTTP/1 server", target: h1.Addr().String(), want: []string{"HTTP/1 server answers there"}},
		{name: "TLS against plaintext", target: plain, dial: []grpc.DialOption{tlsCreds}, want: []string{"TLS handshake failed"}},
		{name: "file descriptors", target: plain, conn: ConnMode{Kind: Pooled, N: int(min(lim.Cur, 1<<30)) + 1}, want: []string{"open-file limit"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := shortSpec(tc.target)
			spec.DialTimeout = 5 * time.Second
			conn := tc.conn
			if conn.Kind == "" {
				conn = ConnMode{Kind: Shared}
			}
			spec.Conns = []ConnMode{conn}
			start := time.Now()
			rec, err := RunStep(testutil.Context(t), spec, Step{Conn: conn, RPC: Unary, Inflight: 1}, Options{DialOptions: tc.dial})
			took := time.Since(start)
			var msg string
			if tc.usage {
				var ue *usage.Error
				if !errors.As(err, &ue) || !errors.Is(err, ErrTarget) || !errors.Is(err, ErrBadTarget) {
					t.Fatalf("got %v, want a usage error for the target", err)
				}
				msg = err.Error()
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if rec.Status != result.StatusFailed {
					t.Fatalf("got status %q, want failed", rec.Status)
				}
				msg = rec.Error
			}
			t.Logf("%v: %s", took, msg)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("got %q, want it to name %q", msg, w)
				}
			}
			if strings.Contains(msg, "deadline exceeded") {
				t.Errorf("got %q: the cause is known, not a timeout", msg)
			}
			if took > spec.DialTimeout/2 {
				t.Errorf("took %v, want well under the %v dial timeout", took, spec.DialTimeout)
			}
		})
	}
}
