// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
)

// netemMain is "rpclab netem --listen ... --upstream U ..." as far as
// Session.Proxy needs it: a proxy with no delay in front of U.
func netemMain(args []string) int {
	i := slices.Index(args, "--upstream")
	if i < 0 || i+1 >= len(args) {
		fmt.Fprintln(os.Stderr, "no --upstream")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	p, err := netem.Listen("127.0.0.1:0", args[i+1], netem.Network{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%s%s\n", server.ListeningPrefix, p.Addr())
	if err := p.Serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestRunNamesTheDeadProxy kills the front netem proxy as step 2 starts:
// the run ends with an error wrapping ErrProxyExited that names the proxy
// and the signal, and step 2's record says so, not "target unreachable:
// nothing listens there".
func TestRunNamesTheDeadProxy(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	var sp *Session
	s, err := New(WithServer(testServer(t)), WithPin(false), WithNetem(netem.Network{}, netem.DefaultQueueBytes, true),
		WithOutputs(Output{Name: "--out", Path: out, Keep: true, Open: true}),
		WithProgress(func(e Event) {
			if e.Kind == StepStarted && e.I == 1 {
				sp.proxies[0].p.Kill()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	sp = s
	t.Cleanup(func() { s.Close() })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s.proxies) != 1 || s.Target != s.proxies[0].Addr {
		t.Fatalf("got target %s and %d proxies, want the front proxy's address", s.Target, len(s.proxies))
	}
	recs, err := s.Run(ctx, []Client{goClient(t)}, false)
	if !errors.Is(err, ErrProxyExited) || !strings.Contains(err.Error(), "signal: killed") || !strings.Contains(err.Error(), "netem proxy") {
		t.Fatalf("got %v, want an error wrapping ErrProxyExited naming the netem proxy and signal: killed", err)
	}
	if len(recs) != 2 || recs[0].Status != result.StatusOK || recs[1].Status != result.StatusFailed ||
		!strings.Contains(recs[1].Error, "netem proxy") || strings.Contains(recs[1].Error, "nothing listens") {
		t.Fatalf("got %d records (%+v), want step 1 ok and step 2 failed naming the netem proxy", len(recs), recs)
	}
}
