// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/bulk"
	"github.com/rpclab/rpclab/proto/bulkpb"
	"github.com/rpclab/rpclab/server"
)

const defaultTestTimeout = 30 * time.Second

// startBulk serves the ping and bulk services on loopback in this process.
func startBulk(ctx context.Context, t *testing.T) (bulkpb.BulkServiceClient, *bulkpb.InfoResponse) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	b, err := server.StartBulk(sctx, "127.0.0.1")
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
	return c, info
}

func TestBulkRejectsBadRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultTestTimeout)
	defer cancel()
	c, _ := startBulk(ctx, t)
	tok := make([]byte, bulk.SidechannelTokenLen)
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
		{"sidechannel token too short", func() error {
			_, err := c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: 1, ChunkBytes: 1, SidechannelToken: tok[:3]})
			return err
		}, codes.InvalidArgument, "sidechannel_token has 3 bytes"},
		{"sidechannel without a connection", func() error {
			cctx, ccancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer ccancel()
			_, err := c.SidechannelDownload(cctx, &bulkpb.DownloadRequest{SizeBytes: 1, ChunkBytes: 1, SidechannelToken: tok})
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
	ctx, cancel := context.WithTimeout(context.Background(), defaultTestTimeout)
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

	// A raw TCP request with a bad magic gets the connection closed.
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", info.GetTcpAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\n")); err != nil { // 16 bytes, bad magic
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(defaultTestTimeout))
	if n, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("after a bad request: got %d bytes, %v; want EOF", n, err)
	}
}
