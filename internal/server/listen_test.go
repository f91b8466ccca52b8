// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/proto/bulkpb"
	"github.com/rpclab/rpclab/sidechannel"
)

// bulkServer is a ping and bulk server on loopback in this process.
type bulkServer struct {
	b      *server.Bulk
	c      bulkpb.BulkServiceClient
	info   *bulkpb.InfoResponse
	target string // the main gRPC port, which the sidechannel shares
}

// startBulkServer serves the ping and bulk services on a free loopback
// port in this process.
func startBulkServer(ctx context.Context, t *testing.T, opts ...server.BulkOption) bulkServer {
	t.Helper()
	return serveBulk(ctx, t, testutil.Listen(t), opts...)
}

// serveBulk serves the ping and bulk services on lis.
func serveBulk(ctx context.Context, t *testing.T, lis net.Listener, opts ...server.BulkOption) bulkServer {
	t.Helper()
	sctx, stop := context.WithCancel(ctx)
	b, err := server.StartBulk(sctx, "127.0.0.1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx, lis, server.Options{Bulk: b}) }()
	t.Cleanup(func() {
		stop()
		<-done
		b.Close()
	})
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	c := bulkpb.NewBulkServiceClient(cc)
	info, err := c.Info(ctx, &bulkpb.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return bulkServer{b: b, c: c, info: info, target: lis.Addr().String()}
}

// tcpDownload asks the raw TCP listener for size bytes on c and returns
// what came back (the whole response up to size, or a refusal).
func tcpDownload(ctx context.Context, c net.Conn, size int64) (string, error) {
	var req [bulk.TCPRequestLen]byte
	bulk.EncodeTCPRequest(&req, size, 64<<10)
	if _, err := c.Write(req[:]); err != nil {
		return "", err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetReadDeadline(dl)
	}
	b, err := io.ReadAll(io.LimitReader(c, size))
	return string(b), err
}

func dialCtx(ctx context.Context, t *testing.T, addr string) net.Conn {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestBulkListenersSurviveAcceptError: after an Accept error (too many
// open files), every bulk listener keeps serving: a raw TCP download, an
// HTTP one and a sidechannel download (whose connection the main port's
// split accepts, after its own Accept error) all complete.
func TestBulkListenersSurviveAcceptError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	var wrapped atomic.Int32
	restore := server.SetWrapListener(func(l net.Listener) net.Listener {
		wrapped.Add(1)
		return testutil.FailFirstAccept(l)
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := serveBulk(ctx, t, testutil.FailFirstAccept(lis))
	restore()
	if got := wrapped.Load(); got != 3 {
		t.Fatalf("got %d listeners wrapped, want 3", got)
	}
	if got, err := tcpDownload(ctx, dialCtx(ctx, t, s.info.TcpAddr), 1000); len(got) != 1000 {
		t.Errorf("raw TCP after an accept error: got %d bytes (%v), want 1000", len(got), err)
	}
	for _, tr := range []string{bulk.HTTP1, bulk.Sidechannel} {
		if err := oneDownload(ctx, s, tr, 1000); err != nil {
			t.Errorf("%s after an accept error: %v", tr, err)
		}
	}
}

// oneDownload runs one download of size bytes on transport tr.
func oneDownload(ctx context.Context, s bulkServer, tr string, size int64) error {
	c, info := s.c, s.info
	switch tr {
	case bulk.HTTP1:
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/bulk?size=%d&chunk=100", info.HttpAddr, size), nil)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || int64(len(b)) != size {
			return fmt.Errorf("got %s with %d bytes (%v), want 200 with %d", resp.Status, len(b), err, size)
		}
		return nil
	case bulk.Sidechannel:
		scc, err := sidechannel.NewClient(s.target)
		if err != nil {
			return err
		}
		var res *bulkpb.SidechannelResult
		var n int64
		err = scc.Do(ctx, func(ctx context.Context) error {
			var err error
			res, err = c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: size, ChunkBytes: 100})
			return err
		}, func(sc *sidechannel.Conn) error {
			var err error
			n, err = io.Copy(io.Discard, sc)
			return err
		})
		if err != nil {
			return err
		}
		if n != size || res.GetBytesSent() != size {
			return fmt.Errorf("got %d bytes, %d sent, want %d", n, res.GetBytesSent(), size)
		}
		return nil
	}
	return fmt.Errorf("no transport %s", tr)
}

// TestBulkOverCapNamesLimit: with every slot of the cap taken, a raw TCP
// connection reads a refusal naming the cap, a sidechannel download gets
// ResourceExhausted naming it, and an HTTP request gets 503 naming it (not
// a wait that never ends).
func TestBulkOverCapNamesLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	s := startBulkServer(ctx, t, server.WithMaxBulkConns(2))
	info := s.info
	// Two raw TCP connections, each served once so they are accepted.
	for range 2 {
		if got, err := tcpDownload(ctx, dialCtx(ctx, t, info.TcpAddr), 10); len(got) != 10 {
			t.Fatalf("got %q (%v), want 10 bytes", got, err)
		}
	}
	c := dialCtx(ctx, t, info.TcpAddr)
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetReadDeadline(dl)
	}
	b, err := io.ReadAll(c)
	if want := bulk.RefusalMagic + "server: the bulk tcp listener holds 2 connections, its cap"; !strings.HasPrefix(string(b), want) {
		t.Errorf("a third raw connection: got %q (%v), want %q...", b, err, want)
	}
	// Two sidechannel transfers under way (each has sent its first byte,
	// then waits for a reader), then a third.
	scc, err := sidechannel.NewClient(s.target)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		callCtx, sc, err := scc.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sc.Close() }) // cancels the call
		go func() {
			_, _ = s.c.SidechannelDownload(callCtx, &bulkpb.DownloadRequest{SizeBytes: 1 << 30, ChunkBytes: 64 << 10})
		}()
		if _, err := io.ReadFull(sc, make([]byte, 1)); err != nil {
			t.Fatalf("a sidechannel transfer under the cap: %v", err)
		}
	}
	err = scc.Do(ctx, func(ctx context.Context) error {
		_, err := s.c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: 10, ChunkBytes: 10})
		return err
	}, func(sc *sidechannel.Conn) error {
		_, err := io.Copy(io.Discard, sc)
		return err
	})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "the sidechannel holds 2 transfers, its cap") {
		t.Errorf("a third sidechannel transfer: got %v, want ResourceExhausted naming the cap of 2", err)
	}
	// Two kept-alive HTTP connections, then a third client.
	for range 2 {
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+info.HttpAddr+"/bulk?size=10&chunk=10", nil)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+info.HttpAddr+"/bulk?size=10&chunk=10", nil)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatalf("a third HTTP client: %v, want 503", err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "holds 2 connections, its cap") {
		t.Errorf("a third HTTP client: got %s %q, want 503 naming the cap of 2", resp.Status, b)
	}
}

// TestBulkHTTPClosesIdleConns: a kept-alive HTTP connection that sends no
// next request is closed after the read timeout, so idle clients cannot
// hold every slot; then a new client is served.
func TestBulkHTTPClosesIdleConns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	s := startBulkServer(ctx, t, server.WithMaxBulkConns(1), server.WithBulkReadTimeout(50*time.Millisecond))
	c := dialCtx(ctx, t, s.info.HttpAddr)
	if _, err := io.WriteString(c, "GET /bulk?size=10&chunk=10 HTTP/1.1\r\nHost: rpclab\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetReadDeadline(dl)
	}
	b, err := io.ReadAll(c) // the response, then the server's close when idle
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 200 OK") {
		t.Fatalf("an idle kept-alive connection: got %q, %v; want a 200 response, then the server closing it", b, err)
	}
	if err := oneDownload(ctx, s, bulk.HTTP1, 10); err != nil {
		t.Errorf("a new client after the idle one was closed: %v", err)
	}
}

// callWithID calls SidechannelDownload with a random sidechannel id and
// no sidechannel.
func callWithID(ctx context.Context, c bulkpb.BulkServiceClient) error {
	var id sidechannel.ID
	rand.Read(id[:])
	ctx = metadata.AppendToOutgoingContext(ctx, sidechannel.MetadataKey, id.String())
	_, err := c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: 10, ChunkBytes: 10})
	return err
}

// TestSidechannelRegistryBounded: pending SidechannelDownload calls past
// the cap (WithMaxBulkConns, the sidechannel's WithMaxPending) get
// ResourceExhausted naming it; once the calls end, the ids and the
// goroutines they held are given back.
func TestSidechannelRegistryBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	const max = 8
	s := startBulkServer(ctx, t, server.WithMaxBulkConns(max))
	before := runtime.NumGoroutine()
	callCtx, stopCalls := context.WithCancel(ctx)
	errs := make(chan error, max)
	for range max {
		go func() { errs <- callWithID(callCtx, s.c) }()
	}
	waitFor(ctx, t, "8 sidechannel ids pending", func() bool { return s.b.PendingSidechannels() == max })
	for range 100 {
		if err := callWithID(ctx, s.c); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "8 pending ids, its cap") {
			t.Fatalf("a call past the cap: got %v, want ResourceExhausted naming the cap of 8", err)
		}
	}
	stopCalls()
	for range max {
		if err := <-errs; status.Code(err) != codes.Canceled {
			t.Errorf("a pending call cancelled: got %v, want Canceled", err)
		}
	}
	waitFor(ctx, t, "no id pending and the calls' goroutines gone", func() bool {
		return s.b.PendingSidechannels() == 0 && runtime.NumGoroutine() <= before
	})
}

// TestSidechannelUnclaimedExpires: a sidechannel connection whose id no
// call claims is closed when its id expires (by the sidechannel's clock),
// and a call whose connection never comes fails FailedPrecondition then.
func TestSidechannelUnclaimedExpires(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	clock := server.NewClock()
	s := startBulkServer(ctx, t, server.WithClock(clock))
	conn := dialCtx(ctx, t, s.target)
	var id sidechannel.ID
	rand.Read(id[:])
	if _, err := conn.Write(append([]byte(sidechannel.Magic), id[:]...)); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the connection's id pending", func() bool { return s.b.PendingSidechannels() == 1 })
	clock.Add(sidechannel.DefaultExpiry + time.Second)
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(dl)
	}
	if n, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("after the expiry: got %d bytes, %v; want the connection closed", n, err)
	}
	waitFor(ctx, t, "no id pending after the expiry", func() bool { return s.b.PendingSidechannels() == 0 })
	// A call whose connection never comes fails when its id expires.
	errc := make(chan error, 1)
	go func() { errc <- callWithID(ctx, s.c) }()
	waitFor(ctx, t, "the call's id pending", func() bool { return s.b.PendingSidechannels() == 1 })
	clock.Add(sidechannel.DefaultExpiry + time.Second)
	if err := <-errc; status.Code(err) != codes.FailedPrecondition {
		t.Errorf("a call without its connection: got %v, want FailedPrecondition", err)
	}
}

// waitFor waits until cond holds or ctx ends.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not before the test timeout", what)
		case <-tick.C:
		}
	}
}

// TestSplitPortServesPastAThousandSilentConns: the split main port keeps
// serving gRPC while more connections than sidechannel's default handshake
// bound (1024) sit silent in their handshake, as a gRPC server alone does
// (accepts are in order, so the gRPC client's comes after all of them);
// the connect storm of a per-worker sweep is such a crowd.
func TestSplitPortServesPastAThousandSilentConns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	s := startBulkServer(ctx, t)
	for range sidechannel.DefaultMaxHandshakes + 100 {
		dialCtx(ctx, t, s.target)
	}
	cc, err := grpc.NewClient(s.target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := bulkpb.NewBulkServiceClient(cc).Info(ctx, &bulkpb.InfoRequest{}); err != nil {
		t.Errorf("a gRPC call after %d silent connections: %v, want it answered", sidechannel.DefaultMaxHandshakes+100, err)
	}
}
