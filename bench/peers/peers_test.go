// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package peers

import (
	"context"
	"errors"
	"flag"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/rpclab/rpclab/internal/server"
	pb "github.com/rpclab/rpclab/proto/benchpb"

	"github.com/rpclab/rpclab/internal/testutil"
)

var (
	targetFlag = flag.String("peers.target", "", "host:port of a running BenchmarkService server (default: an rpclab server in this process)")
	serverFlag = flag.String("peers.server", "", "path of an rpclab binary to run as the server in a child process, pinned to --peers.server-cpus")
	serverCPUs = flag.String("peers.server-cpus", "", "CPUs (comma-separated) to pin the --peers.server child to")
)

// connCounter counts the distinct client connections (by remote address)
// that made calls to the in-process server.
type connCounter struct {
	mu    sync.Mutex
	addrs map[string]int
}

func (c *connCounter) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if p, ok := peer.FromContext(ctx); ok {
		c.mu.Lock()
		c.addrs[p.Addr.String()]++
		c.mu.Unlock()
	}
	return h(ctx, req)
}

func (c *connCounter) reset() {
	c.mu.Lock()
	c.addrs = map[string]int{}
	c.mu.Unlock()
}

func (c *connCounter) conns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.addrs)
}

// startServer starts an rpclab ping server on loopback in this process.
func startServer(tb testing.TB) (string, *connCounter) {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	cc := &connCounter{addrs: map[string]int{}}
	s := server.New(server.Options{}, grpc.UnaryInterceptor(cc.intercept))
	go func() { _ = s.Serve(lis) }()
	tb.Cleanup(s.Stop)
	return lis.Addr().String(), cc
}

// benchTarget is the server a benchmark measures against: --peers.target,
// else an rpclab binary in a pinned child process (--peers.server), else a
// server in this process.
func benchTarget(b *testing.B) string {
	b.Helper()
	if *targetFlag != "" {
		return *targetFlag
	}
	if *serverFlag == "" {
		addr, _ := startServer(b)
		return addr
	}
	var cpus []int
	for _, f := range strings.Split(*serverCPUs, ",") {
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			b.Fatalf("--peers.server-cpus %q: %v", *serverCPUs, err)
		}
		cpus = append(cpus, n)
	}
	p, err := server.StartProcess(context.Background(), []string{*serverFlag, "serve", "--listen", "127.0.0.1:0"}, cpus, testutil.DefaultTimeout)
	if err != nil {
		b.Fatalf("start %s: %v", *serverFlag, err)
	}
	b.Cleanup(func() { _ = p.Stop() })
	return p.Addr
}

func TestPeersCallRealServer(t *testing.T) {
	addr, counter := startServer(t)
	const conns, workers, calls = 2, 2, 4
	tests := []struct {
		peer Peer
		// wantConns is the number of connections the server must see
		// carrying calls (0: between 1 and conns).
		wantConns int
		wantPick  error
	}{
		{peer: peerNamed(t, "rpclab-pool"), wantConns: conns, wantPick: ErrNoPick},
		{peer: peerNamed(t, "google-api-pool"), wantConns: conns},
		{peer: peerNamed(t, "commons-pool")},
		{peer: peerNamed(t, "bare-conn"), wantConns: 1, wantPick: ErrNoPick},
		{peer: peerNamed(t, "per-goroutine"), wantConns: workers, wantPick: ErrNoPick},
	}
	for _, tc := range tests {
		t.Run(tc.peer.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
			defer cancel()
			counter.reset()
			c, err := tc.peer.Open(ctx, addr, conns)
			if err != nil {
				t.Fatalf("Open(%s, %d): %v", addr, conns, err)
			}
			defer func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			var ok int
			for range workers {
				w, err := c.NewWorker()
				if err != nil {
					t.Fatalf("NewWorker: %v", err)
				}
				for range calls {
					resp := &pb.SimpleResponse{}
					req := &pb.SimpleRequest{ResponseSize: 3, Payload: &pb.Payload{}}
					if err := w.Call(ctx, req, resp); err != nil {
						t.Fatalf("Call: %v", err)
					}
					if got := len(resp.GetPayload().GetBody()); got != 3 {
						t.Fatalf("response body: got %d bytes, want 3", got)
					}
					ok++
				}
				if err := w.Pick(ctx); !errors.Is(err, tc.wantPick) {
					t.Errorf("Pick: got %v, want %v", err, tc.wantPick)
				}
			}
			if got, want := ok, workers*calls; got != want {
				t.Errorf("calls: got %d, want %d", got, want)
			}
			got := counter.conns()
			switch {
			case tc.wantConns > 0 && got != tc.wantConns:
				t.Errorf("connections carrying calls: got %d, want %d", got, tc.wantConns)
			case tc.wantConns == 0 && (got < 1 || got > conns):
				t.Errorf("connections carrying calls: got %d, want 1..%d", got, conns)
			}
		})
	}
}

func TestPeersRejectZeroConns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	for _, p := range All() {
		if p.FixedConns {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			c, err := p.Open(ctx, "127.0.0.1:1", 0)
			if err == nil {
				_ = c.Close()
			}
			if !errors.Is(err, ErrConns) {
				t.Errorf("Open(conns=0): got %v, want %v", err, ErrConns)
			}
		})
	}
}

func TestAllListsRPCLabFirst(t *testing.T) {
	all := All()
	if got, want := all[0].Name, "rpclab-pool"; got != want {
		t.Errorf("All()[0]: got %q, want %q (the ratios' base)", got, want)
	}
	seen := map[string]bool{}
	for _, p := range all {
		if seen[p.Name] {
			t.Errorf("peer %q listed twice", p.Name)
		}
		seen[p.Name] = true
	}
}

func peerNamed(t *testing.T, name string) Peer {
	t.Helper()
	for _, p := range All() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no peer %q", name)
	return Peer{}
}
