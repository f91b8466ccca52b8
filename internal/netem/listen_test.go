// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"errors"
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestProxySurvivesAcceptError: after "too many open files" from Accept
// (issue 25: 11,000 connections ended rpclab netem), the proxy keeps
// serving: the next client's bytes reach the upstream and come back.
func TestProxySurvivesAcceptError(t *testing.T) {
	ctx := testutil.Context(t)
	up := listen(t, func(c net.Conn) { io.Copy(c, c) })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProxy(testutil.FailFirstAccept(lis), up.Addr().String(), Network{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	defer func() {
		p.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
		t.Errorf("after an accept error: got %q, %v; want the echo of ping", got, err)
	}
}

// TestProxyRefusesItself: an upstream that is the proxy's own address
// (the same, a name resolving to it, a local IP under a wildcard listen)
// is refused with ErrLoop; another port is not.
func TestProxyRefusesItself(t *testing.T) {
	free := func(host string) string {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	port := free("127.0.0.1")
	other := free("127.0.0.1")
	for _, tc := range []struct {
		name, listen, upstream string
		loop                   bool
	}{
		{"the same address", "127.0.0.1:" + port, "127.0.0.1:" + port, true},
		{"a name for it", "127.0.0.1:" + port, "localhost:" + port, true},
		{"loopback under a wildcard", "0.0.0.0:" + port, "127.0.0.1:" + port, true},
		{"another port", "127.0.0.1:" + port, "127.0.0.1:" + other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Listen(tc.listen, tc.upstream, Network{})
			if p != nil {
				p.Close()
			}
			if got := errors.Is(err, ErrLoop); got != tc.loop {
				t.Errorf("got %v, want ErrLoop %v", err, tc.loop)
			}
		})
	}
}
