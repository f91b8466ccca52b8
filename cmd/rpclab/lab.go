// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/loadgen"
	"github.com/rpclab/rpclab/report"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/server"
	"github.com/rpclab/rpclab/verdict"
)

// runLab wires a sweep: output files, the child server when there is no
// target, progress on stderr, then the table, CSV, verdict and, with
// sf.report (demo, compare), the HTML report. With
// sf.clients (rpclab compare) it sweeps every client in turn against the
// same server, each with the layouts its stack has, and ends with the
// cross-client table and an HTML report.
func runLab(cmd *cobra.Command, spec *loadgen.Spec, sf *sweepFlags) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	compare := len(sf.clients) > 0
	clients, err := planClients(sf, stderr)
	if err != nil {
		return err
	}

	var jsonl *result.Writer
	if sf.out != "" {
		f, err := os.Create(sf.out)
		if err != nil {
			return usageError{fmt.Errorf("--out: %w", err)}
		}
		defer f.Close()
		jsonl = result.NewWriter(f)
	}
	var csvFile *os.File
	if sf.csv != "" {
		f, err := os.Create(sf.csv)
		if err != nil {
			return usageError{fmt.Errorf("--csv: %w", err)}
		}
		defer f.Close()
		csvFile = f
	}

	open, err := sf.open.open(cmd.Flags(), sf, spec)
	if err != nil {
		return err
	}
	network, withNetem, err := sf.netem.network(cmd.Flags())
	if err != nil {
		return err
	}

	// Every client is built before the server starts, so no build runs
	// beside a measurement.
	clients, buildErr := buildClients(ctx, sf, clients, stderr)
	if len(clients) == 0 {
		return errors.Join(errors.New("no client left to run"), buildErr)
	}

	var o loadgen.Options
	if spec.Target == "" {
		p, clientCPUs, err := startChild(cmd, sf)
		if err != nil {
			return err
		}
		finished := make(chan struct{})
		defer p.Stop()
		defer close(finished) // runs before Stop: the watcher must not report our own stop
		spec.Target, spec.Server, o.ClientCPUs = p.Addr, sf.serverImpl, clientCPUs
		fmt.Fprintf(stderr, "rpclab: started server %s (pid %d)%s\n", p.Addr, p.Pid, pinNote(clientCPUs))
		go func() {
			select {
			case <-p.Done():
				fmt.Fprintf(stderr, "rpclab: the server exited during the run: %s\n", p.Stderr())
			case <-finished:
			case <-ctx.Done():
			}
		}()
	}
	var netemSpec *result.NetemSpec
	if withNetem {
		px, ns, err := startNetem(cmd, network, sf.netem.queue, spec.Target, o.ClientCPUs)
		if err != nil {
			return err
		}
		defer px.Stop()
		fmt.Fprintf(stderr, "rpclab: netem proxy %s -> %s (pid %d): up %s, down %s\n", px.Addr, spec.Target, px.Pid, network.Up, network.Down)
		spec.Target, netemSpec = px.Addr, ns
	}
	steps := 0
	for _, c := range clients {
		steps += len(spec.RPCs) * len(c.conns) * len(spec.Inflight)
	}
	if open != nil {
		steps *= len(open.Rates)
	}
	fmt.Fprintf(stderr, "rpclab: %d steps against %s, about %v\n", steps, spec.Target,
		(time.Duration(steps) * (spec.Warmup + spec.Interval)).Round(time.Second))

	var recs []result.Record
	sink := func(r *result.Record) error {
		r.Spec.Netem = netemSpec
		if spec.Server != "" { // other languages' clients do not know who started the server
			r.Spec.Server = spec.Server
		}
		recs = append(recs, *r)
		if jsonl != nil {
			return jsonl.Write(r)
		}
		return nil
	}
	var sloRes []verdict.SLOResult
	var errs []error
	if buildErr != nil {
		errs = append(errs, buildErr)
	}
	for _, c := range clients {
		if compare {
			fmt.Fprintf(stderr, "rpclab: %s client: %s\n", c.lang, strings.Join(c.conns, ","))
		}
		cspec := *spec
		if c.goConns != nil {
			cspec.Conns = c.goConns
		}
		prog, stopProgress := progress(stderr)
		switch {
		case c.ext != nil:
			err = c.ext.Sweep(ctx, &cspec, sink, prog)
		case open != nil:
			sloRes, err = sf.open.sweep(ctx, &cspec, open, o, sink, prog)
		default:
			err = loadgen.Sweep(ctx, &cspec, o, sink, prog)
		}
		stopProgress()
		if err != nil {
			if ctx.Err() != nil || !compare {
				errs = append(errs, err)
				break
			}
			// One client failing does not stop the comparison.
			fmt.Fprintf(stderr, "rpclab: the %s client: %v\n", c.lang, err)
			errs = append(errs, fmt.Errorf("%s client: %w", c.lang, err))
		}
	}
	err = errors.Join(errs...)

	if len(recs) > 0 {
		fmt.Fprintln(stdout)
		table := report.Table
		if open != nil {
			table = report.OpenTable
		}
		if terr := table(stdout, recs); terr != nil {
			return terr
		}
		if csvFile != nil {
			if cerr := report.CSV(csvFile, recs); cerr != nil {
				return fmt.Errorf("--csv: %w", cerr)
			}
		}
		fmt.Fprintln(stdout)
		if open == nil { // the verdict reads closed-loop in-flight series
			fmt.Fprintln(stdout, verdict.Text(verdict.Verdicts(recs)))
			for _, n := range verdict.ConnNotes(recs) {
				fmt.Fprintln(stdout, "Note:", n)
			}
		} else if open.SLO != nil {
			report.SLOText(stdout, open.SLO.String(), sloRes)
		}
		if compare {
			fmt.Fprintln(stdout)
			if terr := report.ClientTable(stdout, recs); terr != nil {
				return terr
			}
		}
		if sf.out != "" {
			fmt.Fprintf(stderr, "rpclab: %d records written to %s\n", len(recs), sf.out)
		}
	}
	if page := sf.report; page != "" && len(recs) > 0 {
		name := "rpclab " + cmd.Name() // demo, compare
		if rerr := writeHTMLReport(page, []report.Run{{Name: name, Records: recs}}, nil); rerr != nil {
			return rerr
		}
		fmt.Fprintf(stderr, "rpclab: report with charts written to %s\n", absPath(page))
		if sf.png != "" {
			paths, perr := report.WritePNGs(sf.png, []report.Run{{Name: name, Records: recs}})
			if perr != nil {
				return perr
			}
			fmt.Fprintf(stderr, "rpclab: %d charts written to %s\n", len(paths), sf.png)
		}
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("interrupted: %d steps measured and kept: %w", len(recs), ctx.Err())
	}
	return err
}

// labClient is one client a lab runs: the in-process Go client (ext nil)
// or another language's, with the layouts it sweeps.
type labClient struct {
	lang  string
	ext   *loadgen.External
	conns []string
	// goConns are conns parsed for the Go client of rpclab compare (nil
	// otherwise: a plain sweep's spec carries its own).
	goConns []loadgen.ConnMode
}

// planClients resolves the clients of a run: sf.client, or with rpclab
// compare every one of sf.clients, each with the --conn layouts its stack
// has (a layout no client has is a usage error). It builds nothing.
func planClients(sf *sweepFlags, stderr io.Writer) ([]labClient, error) {
	if len(sf.clients) == 0 {
		return []labClient{{lang: sf.client, conns: sf.conns}}, nil
	}
	var out []labClient
	used := map[string]bool{}
	for _, lang := range sf.clients {
		c := labClient{lang: lang}
		for _, conn := range sf.conns {
			if loadgen.HasLayout(lang, conn) {
				c.conns = append(c.conns, conn)
				used[conn] = true
			}
		}
		if len(c.conns) == 0 {
			fmt.Fprintf(stderr, "rpclab: skipping the %s client: it has none of the layouts %s\n", lang, strings.Join(sf.conns, ","))
			continue
		}
		if lang == "go" {
			m, err := goConns(c.conns)
			if err != nil {
				return nil, err
			}
			c.goConns = m
		}
		out = append(out, c)
	}
	for _, conn := range sf.conns {
		if !used[conn] {
			return nil, usageError{fmt.Errorf("--conn: none of the clients %s has the layout %q", strings.Join(sf.clients, ","), conn)}
		}
	}
	return out, nil
}

// buildClients finds and builds (if needed) every client of another
// language in clients. With rpclab compare (sf.clients) a client that does
// not build is reported and left out, and its error returned beside the
// clients that remain; otherwise the first error ends the run.
func buildClients(ctx context.Context, sf *sweepFlags, clients []labClient, stderr io.Writer) ([]labClient, error) {
	var out []labClient
	var errs []error
	for _, c := range clients {
		if c.lang != "go" {
			e, err := buildClient(ctx, sf, c, stderr)
			if err != nil {
				if len(sf.clients) == 0 || ctx.Err() != nil {
					return nil, err
				}
				fmt.Fprintf(stderr, "rpclab: leaving out the %s client: %v\n", c.lang, err)
				errs = append(errs, fmt.Errorf("%s client: %w", c.lang, err))
				continue
			}
			c.ext = e
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

func buildClient(ctx context.Context, sf *sweepFlags, c labClient, stderr io.Writer) (*loadgen.External, error) {
	fmt.Fprintf(stderr, "rpclab: building the %s client if needed\n", c.lang)
	return buildExternal(ctx, sf.clientsDir, c.lang, c.conns, stderr)
}

// buildExternal finds clients/<lang> under clientsDir (by default the
// clients/ folder above the working directory or the executable) and
// builds it if it is out of date.
func buildExternal(ctx context.Context, clientsDir, lang string, conns []string, stderr io.Writer) (*loadgen.External, error) {
	if clientsDir == "" {
		d, err := loadgen.FindClientsDir()
		if err != nil {
			return nil, err
		}
		clientsDir = d
	}
	e, err := loadgen.NewExternal(clientsDir, lang, conns, stderr)
	if err != nil {
		return nil, err
	}
	if err := e.Build(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// startChild starts "rpclab serve" as a separate process. With two or more
// CPUs (and no --no-pin) the server gets the last CPU and this process the
// others, so client and server never compete for a core.
func startChild(cmd *cobra.Command, sf *sweepFlags) (*server.Process, []int, error) {
	var clientCPUs, serverCPUs []int
	if cpus, err := procstat.AllowedCPUs(); err == nil && len(cpus) >= 2 && !sf.noPin {
		serverCPUs = cpus[len(cpus)-1:]
		clientCPUs = cpus[:len(cpus)-1]
	}
	var argv []string
	switch sf.serverImpl {
	case "go":
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("find own executable to start the server: %w", err)
		}
		argv = []string{exe, "serve", "--listen", "127.0.0.1:0"}
		if len(serverCPUs) > 0 {
			// The Go server pins itself, so GOMAXPROCS matches its CPUs.
			argv = append(argv, "--cpus", strconv.Itoa(serverCPUs[0]))
			serverCPUs = nil
		}
	case "cpp":
		e, err := buildExternal(cmd.Context(), sf.clientsDir, "cpp", []string{"shared"}, cmd.ErrOrStderr())
		if err != nil {
			return nil, nil, err
		}
		argv = []string{filepath.Join(e.Dir, "rpclab-server"), "--listen", "127.0.0.1:0"}
	default:
		return nil, nil, usageError{fmt.Errorf("--server: unknown implementation %q (want go or cpp)", sf.serverImpl)}
	}
	argv = append(argv, sf.serverOptions...)
	p, err := server.StartProcess(cmd.Context(), argv, serverCPUs, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	if len(clientCPUs) > 0 {
		if err := procstat.Pin(0, clientCPUs); err != nil {
			clientCPUs = nil
		} else {
			runtime.GOMAXPROCS(len(clientCPUs))
		}
	}
	return p, clientCPUs, nil
}

func pinNote(cpus []int) string {
	if len(cpus) == 0 {
		return ""
	}
	return fmt.Sprintf(", client pinned to CPUs %v, server to the next", cpus)
}

// progress reports each step on stderr: a line per finished step, and, when
// stderr is a terminal, a live bar under them (step i of n, the last step's
// throughput, time left) drawn by schollz/progressbar. The bar refreshes
// every second until the last step ends or stop is called (at the latest
// when the sweep returns), and is cleared then.
func progress(w io.Writer) (p loadgen.Progress, stop func()) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		var started time.Time
		return loadgen.Progress{
			Start: func(i, n int, s loadgen.Step) { started = time.Now() },
			End: func(i, n int, s loadgen.Step, r *result.Record) {
				if started.IsZero() { // no Start for this step
					fmt.Fprintln(w, stepLine(i, n, s, r))
					return
				}
				fmt.Fprintf(w, "%s  (%.1fs)\n", stepLine(i, n, s, r), time.Since(started).Seconds())
				started = time.Time{}
			},
		}, func() {}
	}
	var (
		mu                  sync.Mutex
		bar                 *progressbar.ProgressBar
		sweepStart, started time.Time
		lastEnd             time.Time
		done, total         int
		step                loadgen.Step
		last                string
		stopped             bool
		quit                = make(chan struct{})
		quitOnce            sync.Once
	)
	// describe says where the sweep is; mu must be held.
	describe := func() string {
		d := fmt.Sprintf("step %d/%d %s %s inflight=%d", min(done+1, total), total, step.Conn, step.RPC, step.Inflight)
		if last != "" {
			d += " | last " + last
		}
		if done == 0 {
			return d + " | estimating time left"
		}
		per := lastEnd.Sub(sweepStart).Seconds() / float64(done) // finished steps only
		left := per*float64(total-done) - time.Since(started).Seconds()
		return d + fmt.Sprintf(" | ~%s left", time.Duration(max(left, 0)*float64(time.Second)).Round(time.Second))
	}
	end := func() {
		quitOnce.Do(func() {
			close(quit)
			mu.Lock()
			defer mu.Unlock()
			stopped = true
			if bar != nil {
				_ = bar.Clear()
			}
		})
	}
	return loadgen.Progress{
		Start: func(i, n int, s loadgen.Step) {
			mu.Lock()
			defer mu.Unlock()
			step, started, total = s, time.Now(), n
			if bar == nil {
				sweepStart = started
				bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
					progressbar.OptionSetWidth(25), progressbar.OptionSetPredictTime(false),
					progressbar.OptionSetElapsedTime(false), progressbar.OptionUseANSICodes(true),
					progressbar.OptionSetRenderBlankState(true), progressbar.OptionShowDescriptionAtLineEnd())
				go func() {
					t := time.NewTicker(time.Second)
					defer t.Stop()
					for {
						select {
						case <-t.C:
							mu.Lock()
							if !stopped {
								bar.Describe(describe())
							}
							mu.Unlock()
						case <-quit:
							return
						}
					}
				}()
			}
			bar.Describe(describe())
		},
		End: func(i, n int, s loadgen.Step, r *result.Record) {
			mu.Lock()
			if bar == nil { // no Start came first
				fmt.Fprintln(w, stepLine(i, n, s, r))
				mu.Unlock()
				return
			}
			_ = bar.Clear()
			fmt.Fprintf(w, "%s  (%.1fs)\n", stepLine(i, n, s, r), time.Since(started).Seconds())
			done, lastEnd = i+1, time.Now()
			last = "-"
			if r.Status == result.StatusOK {
				last = fmt.Sprintf("%.0f req/s", r.ThroughputRPS)
			}
			bar.Describe(describe())
			_ = bar.Set(done)
			mu.Unlock()
			if i == n-1 {
				end()
			}
		},
	}, end
}

// stepLine describes a finished step.
func stepLine(i, n int, s loadgen.Step, r *result.Record) string {
	line := fmt.Sprintf("[%d/%d] %-10s %-9s inflight=%-4d", i+1, n, s.Conn, s.RPC, s.Inflight)
	switch r.Status {
	case result.StatusOK:
		line += fmt.Sprintf(" %9.0f req/s  p99 %7.1f µs  conns %d", r.ThroughputRPS, float64(r.Latency.P99NS)/1e3, r.ConnsObserved)
		if len(r.Errors) > 0 {
			var n int64
			for _, c := range r.Errors {
				n += c
			}
			line += fmt.Sprintf("  errors %d", n)
		}
	default:
		line += " " + r.Status + ": " + r.Error
	}
	return line
}
