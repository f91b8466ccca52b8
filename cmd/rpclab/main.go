// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command rpclab measures, explains and fixes the client-side connection
// bottleneck of gRPC: a ping server, a closed-loop load generator that sweeps
// in-flight counts per connection layout, and reports with a verdict.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/doctor"
	"github.com/rpclab/rpclab/internal/flow"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/usage"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1 // a run failed (unreachable target, failed steps)
	exitUsage       = 2 // bad flags or arguments
	exitInterrupted = 130
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes rpclab with args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run under parent (tests give one with a deadline, as a
// Ctrl-C would end it).
func runContext(parent context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
	}()
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	msg, usage := usageMessage(err)
	fmt.Fprintln(stderr, "rpclab:", msg)
	switch {
	case usage:
		return exitUsage
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return exitInterrupted
	default:
		return exitFailure
	}
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "rpclab",
		Short: "Measure, explain and fix gRPC's client-side connection bottleneck",
		Long: `rpclab measures how a gRPC client's connection layout limits throughput.

One gRPC channel multiplexes every RPC over a single TCP connection. On a fast
network that connection, not the server, caps throughput: more RPCs in flight
bring more latency, not more requests per second. rpclab sweeps the in-flight
count for several connection layouts (one shared connection, one per worker,
a pool of N), counts the TCP connections the operating system really sees,
and says whether the client is the bottleneck.

Start with "rpclab demo".`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage.Wrap(err) })
	root.AddCommand(newServeCmd(), newBulkCmd(), newSweepCmd(), newDemoCmd(), newValidateCmd(), newReportCmd(), newNetemCmd(), newFlowCmd(), newDoctorCmd(), newCompareCmd(), newImportCmd(), newWorkerCmd())
	usageArgs(root)
	return root
}

// usageArgs makes wrong positional arguments usage errors (exit 2) in c's
// subcommands, at every depth ("rpclab netem selftest extra" too).
func usageArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		usageArgs(sub)
		if sub.Args == nil {
			continue
		}
		args := sub.Args
		sub.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usage.Wrap(err)
			}
			return nil
		}
	}
}

// usageMessage is what run prints for err, and whether err is a bad
// setting (exit 2): a *usage.Error whose setting has a flag reads as that
// flag and the cause; any other error as its own text.
func usageMessage(err error) (msg string, isUsage bool) {
	var ue *usage.Error
	if !errors.As(err, &ue) {
		return err.Error(), false
	}
	if flag, ok := flags[ue.Setting]; ok {
		return flag + ": " + ue.Err.Error(), true
	}
	return err.Error(), true
}

// flags names the flag of each setting a *usage.Error can name.
var flags = map[error]string{
	loadgen.ErrTarget: "--target", loadgen.ErrConn: "--conn", loadgen.ErrRPC: "--rpc",
	loadgen.ErrInflight: "--inflight", loadgen.ErrMinInflight: "--min-inflight",
	loadgen.ErrMaxInflight: "--max-inflight", loadgen.ErrInflightStep: "--step",
	loadgen.ErrPayload: "--payload", loadgen.ErrWarmup: "--warmup", loadgen.ErrAutoWarmup: "--auto-warmup", loadgen.ErrInterval: "--interval",
	loadgen.ErrDialTimeout: "--dial-timeout", loadgen.ErrRPCTimeout: "--rpc-timeout",
	loadgen.ErrRate: "--rps", loadgen.ErrArrival: "--arrival", loadgen.ErrPacing: "--pacing",
	loadgen.ErrMaxOutstanding: "--max-outstanding", loadgen.ErrDrain: "--drain", loadgen.ErrMaxRPS: "--max-rps",
	loadgen.ErrService:  "--service",
	extclient.ErrClient: "--client", extclient.ErrClientsDir: "--clients-dir", extclient.ErrClientFlags: "--client",
	flow.ErrBadPayload: "--payload", flow.ErrBadTransport: "--transport", flow.ErrBadRTT: "--rtt",
	flow.ErrBadRPCs: "--rpcs", flow.ErrBadBudget: "--budget", flow.ErrBadWindow: "--window", flow.ErrBadRate: "--rate",
	netem.ErrBadDelay: "--delay", netem.ErrBadJitter: "--jitter", netem.ErrBadRate: "--rate",
	netem.ErrBadDownDelay: "--down-delay", netem.ErrBadDownJitter: "--down-jitter", netem.ErrBadDownRate: "--down-rate",
	doctor.ErrTarget: "--target", doctor.ErrBudget: "--budget", doctor.ErrMaxInflight: "--max-inflight",
	doctor.ErrMaxRPS: "--max-rps", doctor.ErrPools: "--pools", doctor.ErrStep: "--dial-timeout", doctor.ErrCall: "--call",
	doctor.ErrAdaptive: "--adaptive", doctor.ErrDialOptions: "--client",
}
