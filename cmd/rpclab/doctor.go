// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/doctor"
	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/report"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// doctorCmdFlags are doctor's flags.
type doctorCmdFlags struct {
	o     doctor.Options
	call  callFlags
	out   string
	force bool
	// client is the stack whose client runs the study ("go": in process),
	// clientsDir the clients/ folder it is built in.
	client, clientsDir string
	live               liveFlags
}

func newDoctorCmd() *cobra.Command {
	df := doctorCmdFlags{o: doctor.DefaultOptions("")}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "A one-minute study of your service: is the client's connection the bottleneck?",
		Long: `Measure your service in a closed loop on one shared connection, on pools of
2, 4 and 8 connections and on an adaptive pool of 1 to 8 (pool:auto), in rounds
of doubling in-flight counts: at each count the shared connection and every pool
still climbing, so layouts are compared at the counts they share; a pool's climb
ends after two steps in a row that add less than 10%. Then it measures the
deciding comparison again, in interleaved rounds, until its ratio's range clears
the 1.3x line or the budget ends, and prints the verdict rpclab sweep and
rpclab report give for the same records (docs/verdict.md): whether the single
connection is the bottleneck, with the ratio's range, the pool to use (the
fewest connections reaching 90% of the best pool's throughput; the adaptive
pool when it matches the best fixed pool), and the code change.

It takes about --budget (1 minute), and never sends faster than --max-rps nor
keeps more than --max-inflight RPCs in flight: it is aimed at real services.
The adaptive pool (pool:auto) runs after the fixed layouts, at the two largest
in-flight counts they reached, on top of --budget: each of its steps first warms
up for as long as the pool needs to grow to the most connections it can use at
that count (the adaptive pool adds one at most every 12 s trial + 1 s
decision: 1m32s from 1 to 8 connections), then on while a trial is under way
(at most 24 s), so that it measures the size the pool settles at; about four
minutes more at most. --adaptive=false
leaves it out.
Without --call it sends the BenchmarkService ping. An existing records file
given to --out is kept unless --force.

--client LANG runs the study through that stack's client (cpp, java, rust,
python, node: clients/<lang>, built first if out of date) and prints the change
in that stack's pool library. Each layout is one run of the client over the
in-flight counts 1, 2, 4, ... that fit --budget (at least 2, at most
--max-inflight). That client sends the ping only, in a closed loop, in
plaintext: not with --call, --data, --max-rps, --tls or --header. The adaptive
pool is Go's only: with --client other than go there is no pool:auto layout.`,
		Example: `  rpclab doctor --target localhost:50051
  rpclab doctor --target api.internal:443 --tls --call shop.Catalog/GetItem --data '{"id": 7}' --max-rps 2000 --max-inflight 32
  rpclab doctor --target localhost:50051 --client java`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDoctor(cmd, &df) },
	}
	o := &df.o
	f := cmd.Flags()
	f.StringVar(&o.Target, "target", "", "host:port of the service to study")
	f.DurationVar(&o.Budget, "budget", o.Budget, "about how long the study takes")
	f.Float64Var(&o.MaxRPS, "max-rps", 0, "never send faster than this many RPCs per second (0: no cap)")
	f.IntVar(&o.MaxInflight, "max-inflight", o.MaxInflight, "never keep more RPCs than this in flight")
	f.IntSliceVar(&o.Pools, "pools", o.Pools, "pool sizes compared with one shared connection")
	f.BoolVar(&o.Adaptive, "adaptive", o.Adaptive, "also try an adaptive pool (pool:auto:1:MAX, MAX the largest of --pools)")
	f.DurationVar(&o.DialTimeout, "dial-timeout", o.DialTimeout, "how long a step waits for its connections")
	f.StringVarP(&df.out, "out", "o", "", "write the steps' result records (JSON Lines) to this file")
	f.BoolVar(&df.force, "force", false, "overwrite an existing --out records file")
	df.call.register(f, "method to call instead of the ping, as package.Service/Method")
	f.StringVar(&df.client, "client", "go", "client stack that runs the study: go (in process), or cpp, java, rust, python, node (clients/<lang>, built on first use; the ping only, closed loop, plaintext, no adaptive pool)")
	f.StringVar(&df.clientsDir, "clients-dir", "", "the clients/ folder of an rpclab checkout (default: found above the working directory)")
	df.live.register(f)
	return cmd
}

// notForExternal are the flags a study through another stack's client
// cannot honour, with the value that leaves each off ("" its default),
// and why: the step spec carries the ping, a closed loop and no dial
// settings, and the adaptive pool is package pool's.
var notForExternal = []struct{ flag, off, why string }{
	{"call", "", "calls the ping only"}, {"data", "", "calls the ping only"}, {"data-file", "", "calls the ping only"},
	{"protoset", "", "calls the ping only"}, {"proto", "", "calls the ping only"}, {"import-path", "", "calls the ping only"},
	{"max-rps", "", "runs a closed loop only (the step spec has no rate cap)"},
	{"tls", "", "dials in plaintext (the step spec carries no TLS)"}, {"cacert", "", "dials in plaintext (the step spec carries no TLS)"},
	{"insecure-skip-verify", "", "dials in plaintext (the step spec carries no TLS)"},
	{"authority", "", "sends no metadata (the step spec carries none)"}, {"header", "", "sends no metadata (the step spec carries none)"},
	{"adaptive", "false", "has no adaptive pool (pool:auto is package pool's, Go's only)"},
}

// doctorClient checks --client and, for a stack other than Go, that no
// flag it cannot honour was given, and finds its client in --clients-dir
// (runDoctor builds it once every option passed). It turns the adaptive
// pool off, saying so on stderr. For Go it returns nil.
func doctorClient(cmd *cobra.Command, df *doctorCmdFlags) (*extclient.External, error) {
	if df.client == "go" {
		return nil, nil
	}
	if !slices.Contains(extclient.Languages, df.client) {
		return nil, usage.Wrap(fmt.Errorf("--client: unknown client %q (want go, %s)", df.client, strings.Join(extclient.Languages, ", ")))
	}
	f := cmd.Flags()
	for _, n := range notForExternal {
		fl := f.Lookup(n.flag)
		off := n.off
		if off == "" {
			off = fl.DefValue
		}
		if fl.Changed && fl.Value.String() != off {
			return nil, usage.Wrap(fmt.Errorf("--%s: not with --client %s: the %s client %s", n.flag, df.client, df.client, n.why))
		}
	}
	if df.o.Adaptive {
		df.o.Adaptive = false
		fmt.Fprintf(cmd.ErrOrStderr(), "rpclab doctor: the adaptive pool (pool:auto) is Go's only: the %s client's study leaves it out\n", df.client)
	}
	dir := df.clientsDir
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, usage.Wrap(fmt.Errorf("--clients-dir: %s is not a folder", dir))
		}
	} else {
		d, err := extclient.FindClientsDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return extclient.NewExternal(dir, df.client, []string{"shared"}, cmd.ErrOrStderr())
}

// runDoctor checks doctor's options and outputs, runs the study, and prints
// its diagnosis.
func runDoctor(cmd *cobra.Command, df *doctorCmdFlags) error {
	ctx, o := cmd.Context(), &df.o
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if cmd.Flags().Changed("pid") {
		return runLive(cmd, &df.live, df.out, df.force)
	}
	if o.Target == "" {
		return usage.Wrap(errors.New("--target: required (host:port of your service)"))
	}
	ext, err := doctorClient(cmd, df)
	if err != nil {
		return err
	}
	if ext != nil {
		o.Runner = doctor.External(ext)
	}
	// Refuse bad options and outputs before resolving --call, building a
	// client or measuring.
	if err := o.Validate(); err != nil {
		return err
	}
	if err := lab.CheckOutputs(df.call.inputs(), df.force, lab.Output{Name: "--out", Path: df.out, Keep: true}); err != nil {
		return usage.Wrap(err)
	}
	if err := doctorPrepare(ctx, stderr, df, ext); err != nil {
		return err
	}
	var jsonl *result.Writer
	var out *os.File
	if df.out != "" {
		f, err := os.Create(df.out)
		if err != nil {
			return usage.Wrap(fmt.Errorf("--out: %w", err))
		}
		defer f.Close()
		out, jsonl = f, result.NewWriter(f)
	}
	o.Step = func(r *result.Record) error {
		doctorStep(stderr, r)
		if jsonl == nil {
			return nil
		}
		if err := jsonl.Write(r); err != nil {
			return fmt.Errorf("--out %s: %w", df.out, err)
		}
		return nil
	}
	doctorStart(ctx, stderr, o, df.client)
	d, err := doctor.Run(ctx, *o)
	if out != nil {
		if cerr := out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--out %s: %w", df.out, cerr)
		}
	}
	doctorEnd(stdout, stderr, df.out, d, err)
	return err
}

// doctorPrepare builds another stack's client, or sets the Go client's dial
// options, and resolves --call: everything a study needs before its first
// step.
func doctorPrepare(ctx context.Context, stderr io.Writer, df *doctorCmdFlags, ext *extclient.External) error {
	o := &df.o
	if ext != nil {
		fmt.Fprintf(stderr, "rpclab: building the %s client if needed\n", ext.Lang)
		if err := ext.Build(ctx); err != nil {
			return err
		}
	} else { // another stack's client dials plaintext itself
		dial, err := df.call.conn.DialOptions()
		if err != nil {
			return usage.Wrap(err)
		}
		o.Load.DialOptions = dial
	}
	if df.call.call == "" {
		return nil
	}
	spec := &loadgen.Spec{Target: o.Target, DialTimeout: o.DialTimeout}
	if spec.DialTimeout == 0 {
		spec.DialTimeout = 5 * time.Second
	}
	m, req, err := df.call.resolve(ctx, spec)
	if err != nil {
		return err
	}
	o.Call, o.Request = m, req
	return nil
}

// doctorEnd prints the verdict of a study that ended well, or what a study
// that stopped kept.
func doctorEnd(stdout, stderr io.Writer, out string, d *doctor.Diagnosis, err error) {
	if d == nil || len(d.Records) == 0 {
		return
	}
	if err == nil {
		report.DoctorText(stdout, d.Records, d.Notes)
		return
	}
	kept := fmt.Sprintf("%d records kept", len(d.Records))
	if out != "" {
		kept += " in " + out
	}
	what := "the study stopped"
	if errors.Is(err, context.Canceled) {
		what = "interrupted"
	}
	fmt.Fprintf(stderr, "rpclab doctor: %s: %s\n", what, kept)
}
