// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command peers runs rpclab beside its peers and prints one table per
// comparison, each figure with its ratio to rpclab. It is run by
// experiments/peers/run.sh, which installs the peers at pinned versions and
// passes their paths; see docs/peers.md.
//
//	peers loadgen [flags]   rpclab sweep, ghz, grpc-go's benchmark client, h2load
//	peers netem [flags]     rpclab netem against toxiproxy's latency toxic
//	peers pooltable         formats `go test -bench Pools` output read on stdin
//	peers policies [flags]  rpclab's pool under each sizing policy: rpclab's, Spanner's, A105's, yarpc's
//	peers ramp [flags]      an open-loop ramp up and down on one pool per policy and per fixed size
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage marks a bad command line (exit 2).
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "peers: want a command: loadgen, netem, pooltable, policies or ramp")
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
	case "policies":
		err = runPolicies(ctx, args[1:], stdout, stderr)
	case "ramp":
		err = runRamp(ctx, args[1:], stdout, stderr)
	default:
		err = fmt.Errorf("%w: unknown command %q (want loadgen, netem, pooltable, policies or ramp)", errUsage, args[0])
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "peers:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "peers:", err)
		return 1
	}
}
