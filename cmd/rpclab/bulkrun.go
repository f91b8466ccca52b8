// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/selfcert"
)

// bulkOutputs are rpclab bulk's outputs.
type bulkOutputs struct {
	out, charts string
	force       bool
}

// runBulk runs the bulk study in a lab.Session (RunBulk): the outputs are
// checked first, then the child server (without --target) is started, and
// a netem proxy in front of each listener (with --delay and the like).
func runBulk(cmd *cobra.Command, spec *bulk.Spec, bo *bulkOutputs, nf *netemFlags, noPin bool, bt *bulkTLS) (recs []result.BulkRecord, err error) {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	d := newDrawer(stderr, false)
	opts := []lab.Option{lab.WithPin(!noPin), lab.WithForce(bo.force), lab.WithProgress(d.event), lab.WithOutputs(
		lab.Output{Name: "--out", Path: bo.out, Keep: true, Open: true},
		lab.Output{Name: "--charts", Path: bo.charts, Dir: true},
	)}
	network, withNetem, err := nf.network(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if withNetem {
		opts = append(opts, lab.WithNetem(network, nf.queue, false))
	}
	clientTLS := bt.clientConfig()
	if spec.Target != "" {
		opts = append(opts, lab.WithTarget(spec.Target))
	} else {
		var extra []string
		if bt.on {
			var cleanup func()
			extra, clientTLS, cleanup, err = childCert()
			if err != nil {
				return nil, err
			}
			defer cleanup()
		}
		srv, err := childServer(cmd, "go", "", extra)
		if err != nil {
			return nil, err
		}
		opts = append(opts, lab.WithServer(srv))
	}
	s, err := lab.New(opts...)
	if err != nil {
		return nil, labError(err)
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	return s.RunBulk(ctx, spec, bulk.Options{Progress: bulkProgress(cmd), TLS: clientTLS})
}

// childCert makes a fresh self-signed certificate for the child server's
// loopback address and writes it, with its key, 0600 into a new private
// temporary folder: it returns the serve flags that load them, the client
// configuration that trusts that certificate alone, and cleanup, which
// removes the folder (after the run; the child reads the files at start).
func childCert() (serveArgs []string, client *tls.Config, cleanup func(), err error) {
	cert, err := selfcert.New("127.0.0.1", "localhost")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--tls: %w", err)
	}
	dir, err := os.MkdirTemp("", "rpclab-bulk-tls-") // 0700
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--tls: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	certFile, keyFile, err := cert.WriteFiles(dir)
	if err != nil {
		cleanup()
		return nil, nil, nil, fmt.Errorf("--tls: %w", err)
	}
	// The child listens on 127.0.0.1 (childServer), the name checked.
	return []string{"--tls-cert", certFile, "--tls-key", keyFile}, cert.ClientConfig("127.0.0.1"), cleanup, nil
}

// bulkProgress prints a line per bulk step.
func bulkProgress(cmd *cobra.Command) bulk.Progress {
	stderr := cmd.ErrOrStderr()
	var started time.Time
	return func(e bulk.Event) {
		if e.Kind == bulk.StepStarted {
			started = time.Now()
			return
		}
		s, r := e.Step, e.Record
		line := fmt.Sprintf("[%d/%d] %-11s size=%-7s chunk=%-6s streams=%d", e.I+1, e.N, s.Transport,
			result.FormatBytes(s.Size), result.FormatBytes(int64(s.Chunk)), s.Streams)
		if r.Status == result.StatusOK {
			line += fmt.Sprintf("  %8.0f MB/s", r.ThroughputBytesPerS/1e6)
		} else {
			line += " " + statusText(r.Status, r.Error)
		}
		fmt.Fprintf(stderr, "%s  (%.1fs)\n", line, time.Since(started).Seconds())
	}
}
