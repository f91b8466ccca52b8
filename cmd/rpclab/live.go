// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/live"
	"github.com/rpclab/rpclab/internal/report"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/internal/verdict"
)

// liveFlags are doctor's flags for a window over a running process
// (--pid): no load is sent.
type liveFlags struct {
	pid      int
	window   time.Duration
	watch    bool
	channelz string
}

// liveInterval is the least time between samples: the sampler stretches
// it to stay under 1% of one CPU when a sample costs more than 10 ms (a
// process with thousands of connections).
const liveInterval = time.Second

func (l *liveFlags) register(f *pflag.FlagSet) {
	f.IntVar(&l.pid, "pid", 0, "judge the running gRPC client with this process ID from the kernel (sock_diag, /proc) and channelz, sending no load")
	f.DurationVar(&l.window, "window", 10*time.Second, "with --pid: how long to sample the process")
	f.BoolVar(&l.watch, "watch", false, "with --pid: redraw the process's connections and CPU every second until Ctrl-C, then judge what was seen")
	f.StringVar(&l.channelz, "channelz", "", "with --pid: host:port where the process serves channelz (grpc.channelz.v1), for its channels, subchannels and streams in flight; by default the process's listening ports are asked (in its network namespace only), off: none")
}

// liveOwn are the flags a window reads; every other flag of doctor's is
// the study's.
var liveOwn = map[string]bool{"pid": true, "window": true, "watch": true, "channelz": true, "out": true, "force": true}

// checkLive refuses the study's flags and bad values before anything is
// read.
func checkLive(cmd *cobra.Command, l *liveFlags) error {
	var bad error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if bad == nil && !liveOwn[f.Name] {
			bad = fmt.Errorf("--%s: not with --pid (a live window sends no load; the study is rpclab doctor --target)", f.Name)
		}
	})
	switch {
	case bad != nil:
		return usage.Wrap(bad)
	case l.pid <= 0:
		return usage.Wrap(fmt.Errorf("--pid: %d is not a process ID (want one above 0)", l.pid))
	case l.window < liveInterval && !l.watch:
		return usage.Wrap(fmt.Errorf("--window: %v is below the %v between samples", l.window, liveInterval))
	}
	return nil
}

// runLive samples process --pid for --window (or until Ctrl-C with
// --watch), prints its connections, CPU and verdict, and writes the live
// record to --out.
func runLive(cmd *cobra.Command, l *liveFlags, out string, force bool) error {
	if err := checkLive(cmd, l); err != nil {
		return err
	}
	if err := lab.CheckOutputs(nil, force, lab.Output{Name: "--out", Path: out, Keep: true}); err != nil {
		return usage.Wrap(err)
	}
	ctx, stdout, stderr := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	o := live.Options{Interval: liveInterval, Channelz: l.channelz, FindChannelz: l.channelz == ""}
	if l.channelz == "off" {
		o.Channelz = ""
	}
	s, err := live.Open(ctx, l.pid, o)
	switch {
	case errors.Is(err, live.ErrNoProcess):
		return usage.Wrap(fmt.Errorf("--pid: %w", err))
	case errors.Is(err, live.ErrChannelz):
		return usage.Wrap(fmt.Errorf("--channelz: %w", err))
	case err != nil:
		return err
	}
	defer s.Close()
	rec0 := s.Record(result.StatusOK)
	fmt.Fprintf(stderr, "rpclab doctor: sampling pid %d (%s, %s) every %v %s\n", l.pid, rec0.Process.Comm, rec0.Process.Stack, liveInterval, liveUntil(l))
	if cz := rec0.Channelz; cz != nil && cz.Found {
		fmt.Fprintf(stderr, "rpclab doctor: channelz answers on %s, a listening port of the process (--channelz off: do not ask)\n", cz.Addr)
	}
	status, err := liveLoop(ctx, s, l, stdout, stderr)
	if err != nil {
		return err
	}
	r := s.Record(status)
	if err := result.Check(r); err != nil {
		return err
	}
	if out != "" {
		if err := writeLive(out, r); err != nil {
			return err
		}
	}
	report.LiveText(stdout, r)
	if status == result.StatusInterrupted {
		return context.Canceled
	}
	return nil
}

func liveUntil(l *liveFlags) string {
	if l.watch {
		return "until Ctrl-C"
	}
	return "for " + l.window.String()
}

// liveLoop samples every liveInterval (or the longer wait the sampler's
// budget asks, said once on stderr) until the window ends, the process
// ends, or ctx is done (Ctrl-C: the end of a watch, an interruption of a
// window), and returns the record's status.
func liveLoop(ctx context.Context, s *live.Sampler, l *liveFlags, stdout, stderr io.Writer) (string, error) {
	start := time.Now()
	next := time.NewTimer(s.Next())
	defer next.Stop()
	stretched := false
	for {
		select {
		case <-ctx.Done():
			if l.watch {
				return result.StatusOK, nil
			}
			return result.StatusInterrupted, nil
		case <-next.C:
		}
		if err := s.Sample(ctx); errors.Is(err, live.ErrEnded) {
			return result.LiveEnded, nil
		} else if err != nil {
			return "", err
		}
		wait := s.Next()
		if left := l.window - time.Since(start); !l.watch && left < wait {
			wait = max(left, 0) // the window's last sample, at its end
		}
		if wait > liveInterval && !stretched {
			stretched = true
			fmt.Fprintf(stderr, "rpclab doctor: a sample costs %v of CPU; sampling every %v to stay under 1%% of one CPU\n",
				s.SampleCost().Round(time.Millisecond/10), wait.Round(time.Millisecond))
		}
		next.Reset(wait)
		if l.watch {
			liveRedraw(stdout, s)
		} else if time.Since(start) >= l.window {
			return result.StatusOK, nil
		}
	}
}

// liveRedraw draws the window so far, clearing a terminal first as top
// does.
func liveRedraw(w io.Writer, s *live.Sampler) {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(w, "\x1b[H\x1b[2J")
	}
	r := s.Record(result.StatusOK)
	v := verdict.Live(r)
	report.LiveFrame(w, r, &v)
	fmt.Fprintln(w)
}

func writeLive(path string, r *result.LiveRecord) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := result.NewWriter(f).Write(r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
