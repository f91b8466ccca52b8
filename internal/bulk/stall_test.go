// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestRawClientsGiveUpOnStalledServer: a server that accepts and never
// answers (issue 25: its accept loop gone, the connection in the backlog)
// fails a raw download after stallTimeout, naming the stall, rather than
// hanging it.
func TestRawClientsGiveUpOnStalledServer(t *testing.T) {
	ctx := testutil.LongContext(t)
	old := stallTimeout
	stallTimeout = 20 * time.Millisecond
	defer func() { stallTimeout = old }()
	lis, err := net.Listen("tcp", "127.0.0.1:0") // never accepted: the backlog holds the connections
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	for _, tc := range []struct {
		name string
		d    downloader
	}{
		{"tcp", &tcpDownloader{addr: lis.Addr().String()}},
		{"sidechannel", sidechannelTo(t, lis.Addr().String())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.d.close()
			err := tc.d.download(ctx, 1000, 100, &verifier{})
			if err == nil || !strings.Contains(err.Error(), "stalled") || ctx.Err() != nil {
				t.Errorf("got %v, want an error naming the stalled server", err)
			}
		})
	}
}

func sidechannelTo(t *testing.T, addr string) downloader {
	d, err := dial(Sidechannel, endpoints{target: addr}, DefaultMaxMessage)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
