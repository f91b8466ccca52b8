// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command policies runs rpclab's pool under each sizing policy (package
// policy: rpclab's adaptive one, Spanner's, A105's, yarpc's, and fixed
// sizes) against an rpclab server it starts, and prints one table per run.
// It is run by experiments/peers/run.sh and experiments/pool-known-answers;
// see experiments/adaptive/policies.md.
//
//	policies run [flags]    a closed loop at each in-flight count, one pool per policy
//	policies ramp [flags]   an open-loop ramp up and down on one pool per policy and per fixed size
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
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "policies: want a command: run or ramp")
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = runPolicies(ctx, args[1:], stdout, stderr)
	case "ramp":
		err = runRamp(ctx, args[1:], stdout, stderr)
	default:
		err = fmt.Errorf("%w: unknown command %q (want run or ramp)", cli.ErrUsage, args[0])
	}
	return cli.Exit(stderr, "policies", err)
}
