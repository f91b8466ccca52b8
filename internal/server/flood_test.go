// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/proto/bulkpb"
	"github.com/rpclab/rpclab/sidechannel"
)

// openFDs is how many file descriptors this process holds.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestHelloFloodLeavesTransfers: a stranger who opens more connections than
// the sidechannel's cap, each sending the magic and a random id and then
// nothing (no gRPC call needed), fills no budget a real transfer needs:
// sidechannel downloads succeed while the flood holds its connections,
// and once the flood's hellos pass their short life every descriptor and
// goroutine they held is given back.
func TestHelloFloodLeavesTransfers(t *testing.T) {
	ctx := testutil.Context(t)
	clock := server.NewClock()
	s := startBulkServer(ctx, t, server.WithClock(clock))
	scc, err := sidechannel.NewClient(s.target)
	if err != nil {
		t.Fatal(err)
	}
	download := func() (int64, error) {
		var n int64
		err := scc.Do(ctx, func(ctx context.Context) error {
			_, err := s.c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: 100000, ChunkBytes: 1000})
			return err
		}, func(sc *sidechannel.Conn) error {
			var err error
			n, err = io.Copy(io.Discard, sc)
			return err
		})
		return n, err
	}
	if n, err := download(); err != nil || n != 100000 {
		t.Fatalf("a download before the flood: got %d bytes, %v", n, err)
	}
	fds, goroutines := openFDs(t), runtime.NumGoroutine()

	const flood = server.DefaultMaxBulkConns + 64
	conns := make([]net.Conn, 0, flood)
	for range flood {
		c := dialCtx(ctx, t, s.target)
		conns = append(conns, c)
		var id sidechannel.ID
		rand.Read(id[:])
		if _, err := c.Write(append([]byte(sidechannel.Magic), id[:]...)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(ctx, t, "the flood's hellos at the cap", func() bool { return s.b.PendingSidechannels() == server.DefaultMaxBulkConns })
	for i := range 5 {
		if n, err := download(); err != nil || n != 100000 {
			t.Fatalf("download %d during a flood of %d hellos: got %d bytes, %v; want 100000", i, flood, n, err)
		}
	}
	clock.Add(sidechannel.DefaultHelloExpiry + time.Second)
	waitFor(ctx, t, "no hello pending past the hello expiry", func() bool { return s.b.PendingSidechannels() == 0 })
	for _, c := range conns {
		c.Close()
	}
	waitFor(ctx, t, "descriptors and goroutines back to where they were before the flood", func() bool {
		return openFDs(t) <= fds && runtime.NumGoroutine() <= goroutines
	})
}
