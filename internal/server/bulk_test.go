// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/proto/bulkpb"
	"github.com/rpclab/rpclab/sidechannel"

	"github.com/rpclab/rpclab/internal/testutil"
)

// startBulk is startBulkServer's client and the server's Info.
func startBulk(ctx context.Context, t *testing.T, opts ...server.BulkOption) (bulkpb.BulkServiceClient, *bulkpb.InfoResponse) {
	t.Helper()
	s := startBulkServer(ctx, t, opts...)
	return s.c, s.info
}

func TestBulkRejectsBadRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	c, _ := startBulk(ctx, t)
	var id sidechannel.ID
	withID := metadata.AppendToOutgoingContext(ctx, sidechannel.MetadataKey, id.String())
	tests := []struct {
		name string
		call func() error
		want codes.Code
		msg  string
	}{
		{"download of 0 bytes", func() error {
			st, err := c.Download(ctx, &bulkpb.DownloadRequest{SizeBytes: 0, ChunkBytes: 1024})
			if err != nil {
				return err
			}
			_, err = st.Recv()
			return err
		}, codes.InvalidArgument, "size 0"},
		{"chunk above the server's", func() error {
			st, err := c.Download(ctx, &bulkpb.DownloadRequest{SizeBytes: 1, ChunkBytes: bulk.MaxChunk + 1})
			if err != nil {
				return err
			}
			_, err = st.Recv()
			return err
		}, codes.InvalidArgument, "chunk"},
		{"sidechannel without an id", func() error {
			_, err := c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: 1, ChunkBytes: 1})
			return err
		}, codes.InvalidArgument, sidechannel.MetadataKey},
		{"sidechannel without a connection", func() error {
			cctx, ccancel := context.WithTimeout(withID, 100*time.Millisecond)
			defer ccancel()
			_, err := c.SidechannelDownload(cctx, &bulkpb.DownloadRequest{SizeBytes: 1, ChunkBytes: 1})
			return err
		}, codes.DeadlineExceeded, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if got := status.Code(err); got != tc.want || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want code %v and a message containing %q", err, tc.want, tc.msg)
			}
		})
	}
}

func TestBulkHTTPAndTCPRejectBadRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	_, info := startBulk(ctx, t)
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/bulk?size=0&chunk=1", http.StatusBadRequest},
		{"/bulk?size=ten&chunk=1", http.StatusBadRequest},
		{"/elsewhere", http.StatusNotFound},
		{"/bulk?size=10&chunk=3", http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+info.GetHttpAddr()+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s: got %d %q, want %d", tc.path, resp.StatusCode, b, tc.want)
		}
	}

	// A raw TCP request with a bad magic gets a refusal saying so, then the
	// connection closed.
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", info.GetTcpAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\n")); err != nil { // 16 bytes, bad magic
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(testutil.DefaultTimeout))
	if b, err := io.ReadAll(conn); err != nil || !strings.HasPrefix(string(b), bulk.RefusalMagic) || !strings.Contains(string(b), "bad magic") {
		t.Errorf("after a bad request: got %q, %v; want a refusal naming the bad magic, then EOF", b, err)
	}
}

// A request above the maximum size is refused on every transport before a
// byte is sent; one at the maximum is served.
func TestBulkMaxSize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	const limit = 1 << 20
	c, info := startBulk(ctx, t, server.WithMaxBulkSize(limit))
	for _, tc := range []struct {
		size int64
		ok   bool
	}{{limit, true}, {limit + 1, false}, {1 << 62, false}, {math.MaxInt64, false}} {
		// gRPC
		st, err := c.Download(ctx, &bulkpb.DownloadRequest{SizeBytes: tc.size, ChunkBytes: 64 << 10})
		var n int64
		if err == nil {
			for {
				m, rerr := st.Recv()
				if rerr != nil {
					err = rerr
					break
				}
				n += int64(len(m.GetData()))
			}
		}
		if tc.ok && (n != tc.size || !errors.Is(err, io.EOF)) {
			t.Errorf("gRPC size %d: got %d bytes, %v; want them all", tc.size, n, err)
		}
		if !tc.ok && (n != 0 || status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "maximum of 1048576")) {
			t.Errorf("gRPC size %d: got %d bytes, %v; want InvalidArgument naming the maximum and no byte", tc.size, n, err)
		}
		// HTTP
		resp, err := http.Get(fmt.Sprintf("http://%s/bulk?size=%d&chunk=65536", info.HttpAddr, tc.size))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tc.ok && (resp.StatusCode != 200 || int64(len(body)) != tc.size) {
			t.Errorf("HTTP size %d: got %d with %d bytes, want 200 with them all", tc.size, resp.StatusCode, len(body))
		}
		if !tc.ok && (resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "maximum")) {
			t.Errorf("HTTP size %d: got %d %q, want 400 naming the maximum", tc.size, resp.StatusCode, body[:min(len(body), 200)])
		}
		// Raw TCP: a refusal naming the maximum, and the connection closed.
		conn, err := net.Dial("tcp", info.TcpAddr)
		if err != nil {
			t.Fatal(err)
		}
		var req [bulk.TCPRequestLen]byte
		bulk.EncodeTCPRequest(&req, tc.size, 64<<10)
		if _, err := conn.Write(req[:]); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var got bytes.Buffer
		_, err = io.Copy(&got, io.LimitReader(conn, tc.size))
		conn.Close()
		if tc.ok && int64(got.Len()) != tc.size {
			t.Errorf("raw TCP size %d: got %d bytes (%v), want them all", tc.size, got.Len(), err)
		}
		if r := got.String(); !tc.ok && (err != nil || !strings.HasPrefix(r, bulk.RefusalMagic) || !strings.Contains(r, "maximum of 1048576")) {
			t.Errorf("raw TCP size %d: got %q (%v), want a refusal naming the maximum, then the connection closed", tc.size, r, err)
		}
	}
	// The default is bulk.MaxSize.
	c, info = startBulk(ctx, t)
	_, err := c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: bulk.MaxSize + 1, ChunkBytes: 64 << 10})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "64GiB") {
		t.Errorf("sidechannel size MaxSize+1 at the default: %v, want InvalidArgument naming 64GiB", err)
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/bulk?size=%d&chunk=65536", info.HttpAddr, int64(math.MaxInt64)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("HTTP size MaxInt64 at the default: %d, want 400", resp.StatusCode)
	}
}

// A silent raw connection is closed after the read timeout (the cap's
// refusal is TestBulkOverCapNamesLimit's); once it is gone, a request on a
// new connection is served.
func TestBulkRawListenerLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	_, info := startBulk(ctx, t, server.WithBulkReadTimeout(50*time.Millisecond), server.WithMaxBulkConns(1))
	var d net.Dialer
	silent, err := d.DialContext(ctx, "tcp", info.TcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = silent.SetReadDeadline(dl)
	}
	if n, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("a silent connection: got %d bytes, %v; want it closed by the server", n, err)
	}
	// Its slot is given back when its handler ends, which may follow the
	// close by a moment: a refusal then is no failure, the next try is.
	for {
		c, err := d.DialContext(ctx, "tcp", info.TcpAddr)
		if err != nil {
			t.Fatal(err)
		}
		var req [bulk.TCPRequestLen]byte
		bulk.EncodeTCPRequest(&req, 1000, 100)
		if _, err := c.Write(req[:]); err != nil {
			t.Fatal(err)
		}
		if dl, ok := ctx.Deadline(); ok {
			_ = c.SetReadDeadline(dl)
		}
		b := make([]byte, 1000)
		n, err := io.ReadFull(c, b)
		c.Close()
		if n > 0 && b[0] == bulk.RefusalMagic[0] && ctx.Err() == nil {
			continue
		}
		if err != nil {
			t.Errorf("after the silent one closed: read %d bytes, %v; want 1000", n, err)
		}
		break
	}
}

func TestBulkOptionsRefuseNegatives(t *testing.T) {
	for name, o := range map[string]server.BulkOption{
		"size": server.WithMaxBulkSize(-1), "conns": server.WithMaxBulkConns(-1), "timeout": server.WithBulkReadTimeout(-time.Second),
	} {
		if _, err := server.NewBulk(o); !errors.Is(err, server.ErrBadOption) {
			t.Errorf("NewBulk(negative %s) = %v, want ErrBadOption", name, err)
		}
	}
}

// TestSidechannelOverTLS: with Options.TLS the bulk sidechannel shares the
// TLS port and runs TLS itself: a client with the gRPC connection's TLS
// configuration downloads through it, one without TLS gets no byte.
func TestSidechannelOverTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	certFile, keyFile, roots := selfSigned(t, t.TempDir())
	cfg, err := server.LoadTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := server.NewBulk()
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx, lis, server.Options{TLS: cfg, Bulk: b}) }()
	defer func() { stop(); <-done; b.Close() }()
	addr := lis.Addr().String()
	clientTLS := &tls.Config{RootCAs: roots}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(clientTLS)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := bulkpb.NewBulkServiceClient(cc)
	for _, tc := range []struct {
		name string
		opts []sidechannel.Option
		ok   bool
	}{
		{"TLS", []sidechannel.Option{sidechannel.WithTLS(clientTLS)}, true},
		{"plaintext", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scc, err := sidechannel.NewClient(addr, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var n int64
			cctx := ctx
			if !tc.ok { // its call waits for a hello that never comes
				var ccancel context.CancelFunc
				cctx, ccancel = context.WithTimeout(ctx, 2*time.Second)
				defer ccancel()
			}
			err = scc.Do(cctx, func(ctx context.Context) error {
				_, err := c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: 100000, ChunkBytes: 1000})
				return err
			}, func(sc *sidechannel.Conn) error {
				var err error
				n, err = io.Copy(io.Discard, sc)
				return err
			})
			if tc.ok && (err != nil || n != 100000) {
				t.Errorf("got %d bytes, %v; want 100000", n, err)
			}
			if !tc.ok && (err == nil || n != 0) {
				t.Errorf("got %d bytes, %v; want none and an error", n, err)
			}
		})
	}
}
