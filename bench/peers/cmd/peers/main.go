// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command peers runs rpclab beside its peers and prints one table per
// comparison, each figure with its ratio to rpclab. It is run by
// experiments/peers/run.sh, which installs the peers at pinned versions and
// passes their paths; see docs/peers.md.
//
//	peers loadgen [flags]   rpclab sweep, ghz, grpc-go's benchmark client, h2load
//	peers netem [flags]     rpclab netem against toxiproxy's latency toxic
//	peers pooltable         formats `go test -bench Pools` output read on stdin
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpclab/rpclab/bench/peers/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "peers: want a command: loadgen, netem or pooltable")
		return 2
	}
	var err error
	switch args[0] {
	case "loadgen":
		err = runLoadgen(ctx, args[1:], stdout, stderr)
	case "netem":
		err = runNetem(ctx, args[1:], stdout, stderr)
	case "pooltable":
		err = runPoolTable(stdin, stdout)
	default:
		err = fmt.Errorf("%w: unknown command %q (want loadgen, netem or pooltable)", cli.ErrUsage, args[0])
	}
	return cli.Exit(stderr, "peers", err)
}
