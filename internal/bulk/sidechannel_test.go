// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk_test

import (
	"context"
	"net"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestSidechannelSharesGRPCPort: a sidechannel download goes through the
// server's gRPC port: the record names that one address, the run is told
// of no other listener for it, and the gRPC port's listener accepts each
// download's sidechannel beside the two gRPC channels (the run's control
// channel and the stream's).
func TestSidechannelSharesGRPCPort(t *testing.T) {
	ctx := testutil.LongContext(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: lis}
	sctx, stop := context.WithCancel(ctx)
	b, err := server.StartBulk(sctx, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx, counted, server.Options{Bulk: b}) }()
	defer func() { stop(); <-done; b.Close() }()

	const requests = 3
	target := lis.Addr().String()
	spec := &bulk.Spec{Target: target, Transports: []string{bulk.Sidechannel}, Sizes: []int64{1 << 20},
		Chunks: []int{64 << 10}, RequestsPerStream: requests, Warmup: 0}
	var via []string
	o := bulk.Options{Via: func(_ context.Context, listener, addr string) (string, error) {
		via = append(via, listener+"="+addr)
		return addr, nil
	}}
	var recs []result.BulkRecord
	if err := bulk.Run(ctx, spec, o, func(r *result.BulkRecord) error { recs = append(recs, *r); return nil }); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(recs) != 1 || recs[0].Status != result.StatusOK || recs[0].Requests != requests || recs[0].Spec.Target != target {
		t.Fatalf("got %+v, want one ok record of %d requests naming target %s", recs, requests, target)
	}
	if i := slices.IndexFunc(via, func(v string) bool { return v == "grpc="+target }); i < 0 || len(via) != 4 {
		t.Errorf("the run was told of listeners %q, want grpc=%s and the other three transports' (grpc-tuned, tcp, http), no sidechannel's", via, target)
	}
	if got, want := counted.n.Load(), int64(2+requests); got < want {
		t.Errorf("the gRPC port accepted %d connections, want at least %d (2 gRPC channels and %d sidechannels)", got, want, requests)
	}
}
