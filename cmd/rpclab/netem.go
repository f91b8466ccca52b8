// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/usage"
)

func newNetemCmd() *cobra.Command {
	var (
		nf               netemFlags
		listen, upstream string
		cpus             []int
		dialTimeout      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "netem",
		Short: "Run a TCP proxy that emulates a link's delay, jitter and bandwidth",
		Long: `Run a TCP proxy from --listen to --upstream that adds an emulated network
between them: --delay is the one-way delay in each direction (so the
round-trip time is twice it), --jitter varies it per chunk within ±jitter,
--rate caps each direction's bandwidth. The --down-* flags set the
server-to-client direction apart. Precision is a few microseconds: 50us is
honoured. Bytes are never reordered, lost or duplicated; a close on one side
is passed to the other once the bytes before it have arrived.

Any client in any language can use it: point the client at --listen. The
first line on stdout is "listening on ADDR". SIGINT or SIGTERM stops it.
It forwards whoever connects to --listen (loopback by default) to
--upstream, with no authentication; an upstream that is the proxy itself is
refused, and a failed accept (out of file descriptors) is retried.
"rpclab sweep --delay" starts it for you. "rpclab netem selftest" measures
its accuracy and cost on this machine.`,
		Example: `  rpclab netem --listen 127.0.0.1:6000 --upstream 127.0.0.1:50051 --delay 2.5ms
  rpclab netem --listen :6000 --upstream 10.0.0.5:50051 --delay 32ms --jitter 1ms --rate 1gbit
  rpclab netem selftest`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, _, err := nf.network(cmd.Flags())
			if err != nil {
				return err
			}
			if upstream == "" {
				return usage.Wrap(fmt.Errorf("--upstream: empty: give the server's host:port"))
			}
			if err := checkCPUs("--cpus", cpus); err != nil {
				return err
			}
			if len(cpus) > 0 {
				if err := procstat.Pin(0, cpus); err != nil {
					return err
				}
				runtime.GOMAXPROCS(len(cpus))
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			p, err := netem.Listen(listen, upstream, n, netem.WithQueueBytes(nf.queue),
				netem.WithDialTimeout(dialTimeout), netem.WithLogger(log))
			if errors.Is(err, netem.ErrLoop) {
				return usage.Wrap(fmt.Errorf("--upstream: %w", err))
			}
			if err != nil {
				return usage.Wrap(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s%s\n", server.ListeningPrefix, p.Addr())
			fmt.Fprintf(cmd.ErrOrStderr(), "rpclab netem: %s -> %s: up %s, down %s\n", p.Addr(), upstream, n.Up, n.Down)
			return p.Serve(cmd.Context())
		},
	}
	f := cmd.Flags()
	nf.register(f)
	f.StringVar(&listen, "listen", "127.0.0.1:0", "address to accept clients on (port 0: a free port, printed first)")
	f.StringVar(&upstream, "upstream", "", "host:port of the server behind the emulated link")
	f.IntSliceVar(&cpus, "cpus", nil, "pin the proxy to these CPUs")
	f.DurationVar(&dialTimeout, "dial-timeout", 5*time.Second, "how long to wait for the upstream per client connection; a failure closes that client only")
	cmd.AddCommand(newNetemSelftestCmd())
	return cmd
}

func newNetemSelftestCmd() *cobra.Command {
	var (
		cfg     netem.SelfTestConfig
		bulkStr string
		jsonOut string
		force   bool
	)
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Measure the emulator's own delay, its error at set RTTs, and its CPU per GiB",
		Long: `Measure netem on this machine, all on loopback in this process: the round trip
of a 64-byte ping directly, then through the proxy at each --rtt (0 gives the
emulator's own added delay; others give its error: measured RTT minus direct
RTT minus the set RTT), then --bulk bytes sent to an echo server and back
directly and through a 0-delay proxy, to give the proxy's CPU per GiB.`,
		Example: `  rpclab netem selftest
  rpclab netem selftest --rtt 0,100us,1ms,16ms --pings 2000 --json selftest.json`,
		Args: func(cmd *cobra.Command, a []string) error {
			if err := cobra.NoArgs(cmd, a); err != nil {
				return usage.Wrap(err) // a subcommand: main's wrapping covers only the top level
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := result.ParseBytes(bulkStr)
			if err != nil {
				return usage.Wrap(fmt.Errorf("--bulk: %w", err))
			}
			cfg.BulkBytes = b
			if err := cfg.Validate(); err != nil {
				return err
			}
			if err := lab.CheckOutputs(nil, force, lab.Output{Name: "--json", Path: jsonOut}); err != nil {
				return labError(err)
			}
			res, err := netem.SelfTest(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if jsonOut != "" {
				data, _ := json.MarshalIndent(res, "", "  ")
				if err := lab.WriteFile(jsonOut, func(w io.Writer) error { _, err := w.Write(append(data, '\n')); return err }); err != nil {
					return fmt.Errorf("--json: %w", err)
				}
			}
			return res.WriteText(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.DurationSliceVar(&cfg.RTTs, "rtt", []time.Duration{0, 50 * time.Microsecond, time.Millisecond, 16 * time.Millisecond}, "emulated round-trip times to check (each direction gets half)")
	f.IntVar(&cfg.Pings, "pings", 2000, "round trips measured per RTT (at most)")
	f.DurationVar(&cfg.Budget, "budget", 3*time.Second, "time spent per RTT (at most)")
	f.StringVar(&bulkStr, "bulk", "512MiB", "bytes to send there and back to measure CPU per GiB (0: skip)")
	f.StringVar(&jsonOut, "json", "", "also write the result as JSON to this file (an existing one is kept unless --force)")
	f.BoolVar(&force, "force", false, "replace an existing --json file (never a records file)")
	return cmd
}
