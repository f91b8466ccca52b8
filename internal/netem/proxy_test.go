// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
)

// startProxy runs a proxy to upstream through n until the test ends.
func startProxy(t *testing.T, upstream string, n Network, opts ...Option) *Proxy {
	t.Helper()
	p, err := Listen("127.0.0.1:0", upstream, n, opts...)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(testutil.Context(t))
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	t.Cleanup(func() {
		defer cancel()
		p.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p
}

// listen starts a TCP server calling handle for each connection.
func listen(t *testing.T, handle func(net.Conn)) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	// wg.Wait only after the accept loop has ended: an Add racing a Wait
	// on a zero counter is a data race (sync.WaitGroup's contract).
	t.Cleanup(func() { lis.Close(); <-accepting; wg.Wait() })
	return lis
}

// stream is a reproducible byte stream: ChaCha8 output for a seed.
func stream(seed byte) *rand.ChaCha8 {
	var s [32]byte
	s[0] = seed
	return rand.NewChaCha8(s)
}

// sendStream writes n bytes of stream(seed) to w.
func sendStream(w io.Writer, seed byte, n int) error {
	src := stream(seed)
	buf := make([]byte, 256<<10)
	for n > 0 {
		k := min(n, len(buf))
		src.Read(buf[:k])
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// checkStream reads r to EOF and checks it is exactly n bytes of
// stream(seed), every byte.
func checkStream(r io.Reader, seed byte, n int) error {
	want := stream(seed)
	buf := make([]byte, 256<<10)
	exp := make([]byte, 256<<10)
	var got int
	for {
		k, err := r.Read(buf)
		if k > 0 {
			if got+k > n {
				return fmt.Errorf("got more than the %d bytes sent", n)
			}
			want.Read(exp[:k])
			if !bytes.Equal(buf[:k], exp[:k]) {
				for i := range k {
					if buf[i] != exp[i] {
						return fmt.Errorf("byte %d: got %#x, want %#x", got+i, buf[i], exp[i])
					}
				}
			}
			got += k
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("after %d bytes: %w", got, err)
		}
	}
	if got != n {
		return fmt.Errorf("got %d bytes, want %d", got, n)
	}
	return nil
}

// TestProxyPipes64MiBBothWays sends 64 MiB each way at once through a proxy
// with delay, jitter and a small queue, and checks every byte and both
// half-closes.
func TestProxyPipes64MiBBothWays(t *testing.T) {
	const n = 64 << 20
	serverErr := make(chan error, 1)
	up := listen(t, func(c net.Conn) {
		errc := make(chan error, 1)
		go func() {
			err := sendStream(c, 2, n)
			if err == nil {
				err = c.(*net.TCPConn).CloseWrite()
			}
			errc <- err
		}()
		err := checkStream(c, 1, n)
		serverErr <- errors.Join(err, <-errc)
	})
	link := Link{Delay: 200 * time.Microsecond, Jitter: 150 * time.Microsecond}
	p := startProxy(t, up.Addr().String(), Symmetric(link), WithQueueBytes(1<<20))

	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testutil.DefaultTimeout))
	sendErr := make(chan error, 1)
	go func() {
		err := sendStream(c, 1, n)
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		sendErr <- err
	}()
	if err := checkStream(c, 2, n); err != nil {
		t.Errorf("client received: %v", err)
	}
	if err := <-sendErr; err != nil {
		t.Errorf("client send: %v", err)
	}
	if err := <-serverErr; err != nil {
		t.Errorf("server: %v", err)
	}
	if got, want := p.Stats(), (Stats{Accepted: 1, BytesUp: n, BytesDown: n}); got != want {
		t.Errorf("got stats %+v, want %+v", got, want)
	}
}

// TestProxyPlainTCPClient runs a line protocol (no Go on the wire side:
// any language's client sees the same bytes) through the proxy.
func TestProxyPlainTCPClient(t *testing.T) {
	up := listen(t, func(c net.Conn) {
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			fmt.Fprintf(c, "echo %s\n", sc.Text())
		}
		// EOF from the client: reply once more, then close.
		fmt.Fprintf(c, "bye\n")
	})
	p := startProxy(t, up.Addr().String(), Symmetric(Link{Delay: 50 * time.Microsecond}))

	tests := []struct{ in, want string }{
		{"hello", "echo hello"},
		{"second line", "echo second line"},
	}
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testutil.DefaultTimeout))
	r := bufio.NewReader(c)
	for _, tc := range tests {
		fmt.Fprintf(c, "%s\n", tc.in)
		got, err := r.ReadString('\n')
		if err != nil || strings.TrimSpace(got) != tc.want {
			t.Fatalf("got %q, %v; want %q", got, err, tc.want)
		}
	}
	// A half-close reaches the server, which answers and closes: the
	// client sees the reply, then EOF.
	c.(*net.TCPConn).CloseWrite()
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "bye\n" {
		t.Fatalf("after half-close: got %q, %v; want %q then EOF", rest, err, "bye\n")
	}
}

// TestProxyUpstreamDown: a client of an unreachable upstream gets its
// connection closed, the proxy counts it and keeps serving.
func TestProxyUpstreamDown(t *testing.T) {
	// A port with nothing listening on it.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	p := startProxy(t, deadAddr, Symmetric(Link{Delay: time.Millisecond}), WithDialTimeout(2*time.Second))
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			t.Fatalf("connection %d: the proxy stopped accepting: %v", i, err)
		}
		c.SetDeadline(time.Now().Add(testutil.DefaultTimeout))
		if b, err := io.ReadAll(c); len(b) != 0 || (err != nil && !isReset(err)) {
			t.Errorf("connection %d: got %q, %v; want the connection closed", i, b, err)
		}
		c.Close()
	}
	if got := p.Stats(); got.Failed != 2 || got.Accepted != 2 {
		t.Errorf("got stats %+v, want 2 accepted, 2 failed", got)
	}

	// The upstream comes back on the same port: the same proxy serves.
	lis, err := net.Listen("tcp", deadAddr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", deadAddr, err)
	}
	go func() {
		c, err := lis.Accept()
		if err == nil {
			c.Write([]byte("back"))
			c.Close()
		}
	}()
	defer lis.Close()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testutil.DefaultTimeout))
	if b, err := io.ReadAll(c); err != nil || string(b) != "back" {
		t.Errorf("after the upstream returned: got %q, %v; want %q", b, err, "back")
	}
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "reset")
}

func TestProxyBadInput(t *testing.T) {
	tests := []struct {
		name     string
		upstream string
		n        Network
		opts     []Option
		want     string
	}{
		{"negative delay", "127.0.0.1:1", Symmetric(Link{Delay: -time.Millisecond}), nil, "negative delay"},
		{"negative down jitter", "127.0.0.1:1", Network{Down: Link{Jitter: -1}}, nil, "negative jitter"},
		{"upstream without port", "localhost", Network{}, nil, "missing port"},
		{"zero queue", "127.0.0.1:1", Network{}, []Option{WithQueueBytes(0)}, "must be positive"},
		{"zero dial timeout", "127.0.0.1:1", Network{}, []Option{WithDialTimeout(0)}, "must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Listen("127.0.0.1:0", tc.upstream, tc.n, tc.opts...)
			if err == nil {
				p.Close()
				t.Fatalf("got no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "netem: ") {
				t.Errorf("got %q, want a netem error containing %q", err, tc.want)
			}
		})
	}
}

func TestProxyCloseEndsConnections(t *testing.T) {
	up := listen(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	p, err := Listen("127.0.0.1:0", up.Addr().String(), Symmetric(Link{Delay: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("x"))
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after ctx ended: got %v, want nil", err)
	}
	c.SetReadDeadline(time.Now().Add(testutil.DefaultTimeout))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("client read after the proxy stopped: got no error, want EOF")
	}
}

func TestSelfTestSmall(t *testing.T) {
	ctx := testutil.Context(t)
	res, err := SelfTest(ctx, SelfTestConfig{RTTs: []time.Duration{0, time.Millisecond}, Pings: 20, Budget: time.Second, BulkBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Points); got != 2 {
		t.Fatalf("got %d points, want 2", got)
	}
	// The delay is a floor: a round trip through a 1 ms link never takes
	// less than 1 ms.
	if got := res.Points[1].MedianRTTNS; got < int64(time.Millisecond) {
		t.Errorf("got median RTT %v through a 1 ms link, want at least 1ms", time.Duration(got))
	}
	if res.BulkBytes != 4<<20 || res.ProxyBps <= 0 {
		t.Errorf("got bulk %+v, want 4 MiB measured", res)
	}
	if _, err := SelfTest(ctx, SelfTestConfig{RTTs: []time.Duration{-1}, Pings: 1, Budget: time.Second}); err == nil {
		t.Errorf("negative RTT: got no error")
	}
}
