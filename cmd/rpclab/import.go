// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/foreign"
	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/limitread"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

type importFlags struct {
	out, format, source, target, rpc, conn string
	force                                  bool
}

func newImportCmd() *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:   "import FILE... -o OUT.jsonl",
		Short: "Turn published tables, YDB's, ghz's or benchmain's output into result records",
		Long: `Turn another tool's results or a published table into rpclab result records,
so "rpclab report" draws them beside a local run and the verdict judges them:

  ydb-csv           YDB's grpc_ping_client CSV: the header
                    inflight,throughput,p50,p90,p99,p99_9,p100 (latencies in µs),
                    from YDB's post, from a run of YDB's client or of rpclab's C++
                    client in YDB mode (their whole output: the channels of each
                    step set its layout, shared on one, channel-per-worker on more)
  grpc-go-flow-csv  grpc-go's flow-control post: rtt_ms,rpc_index,grpc_ms,http2_ms,
                    http1_ms, the first RPCs of 1 MB on a fresh connection; flow
                    records (grpc-dynamic, h2c, http1)
  go-gateway-csv    a Go gateway's connection pool: clients,goroutines,requests,qps;
                    closed-loop ping records, in-flight the goroutines, layout
                    shared for one ClientConn, pool:N for N
  gitaly-csv        Gitaly's fetch traffic: repository,server,pack_objects_cache,
                    egress_mb_s,...; bulk records, gitaly-grpc as grpc and
                    rpctest-tcp as tcp, egress in MB/s
  ghz-json          ghz reports (ghz --format json), one or several concatenated
  benchmain         grpc-go's benchmark/benchmain output

The format is detected from each file (a CSV by its header) unless --format
names it. Every record carries --source (default: "<format>: <file>"), where
its numbers came from. What a source does not give is left out: no
histogram, connections not observed (-1), no client CPU. Every file is read
and checked (impossible values, each record against its schema) before
anything is written; a bad line is named with its column and nothing is
written (exit 2).

Example:
  rpclab import --source "YDB blog, 2025" ydb.csv -o ydb.jsonl
  rpclab report ydb.jsonl ours.jsonl -o overlay.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			return runImport(cmd, f, files)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "write the records (JSON Lines) to this file (required); an existing non-empty file is refused unless --force")
	fl.BoolVar(&f.force, "force", false, "overwrite an existing --out file")
	fl.StringVar(&f.format, "format", "", "ydb-csv, grpc-go-flow-csv, go-gateway-csv, gitaly-csv, ghz-json or benchmain (default: detected from each file)")
	fl.StringVar(&f.source, "source", "", `where the numbers come from, carried by every record (default "<format>: <file>")`)
	fl.StringVar(&f.target, "target", "", `what was measured, when the source does not say (YDB's CSV, benchmain, the gateway's table; default "imported")`)
	fl.StringVar(&f.rpc, "rpc", "unary", "YDB's CSV: unary, or streaming (the client's --streaming)")
	fl.StringVar(&f.conn, "conn", "", "YDB's CSV: the layout it ran; default what the input says (a step on one channel shared, on more channel-per-worker; a bare CSV shared); local-pool for a run with --local-pool; shared or channel-per-worker to name a bare CSV's")
	return cmd
}

// maxImportBytes bounds each file import reads: a ghz JSON report with
// every request's details runs to a few hundred bytes per request, so
// 256 MiB is about a million requests; the other formats are summaries
// of a few KiB.
const maxImportBytes = 256 << 20

func runImport(cmd *cobra.Command, f importFlags, files []string) error {
	if f.out == "" {
		return usage.Wrap(errors.New("--out: required (the records file to write)"))
	}
	format := foreign.Format(f.format)
	if format != "" && !isFormat(format) {
		return usage.Wrap(fmt.Errorf("--format %q: want one of %s", f.format, foreign.Known))
	}
	if f.rpc != "unary" && f.rpc != "streaming" {
		return usage.Wrap(fmt.Errorf("--rpc %q: want unary or streaming", f.rpc))
	}
	switch f.conn {
	case "", "shared", "channel-per-worker", "local-pool":
	default:
		return usage.Wrap(fmt.Errorf("--conn %q: want shared, channel-per-worker or local-pool", f.conn))
	}
	if err := lab.CheckOutputs(files, f.force, lab.Output{Name: "--out", Path: f.out, Keep: true}); err != nil {
		return usage.Wrap(err)
	}
	var all []result.Kinded
	for _, file := range files {
		data, err := limitread.ReadFileContext(cmd.Context(), file, maxImportBytes)
		if err != nil && cmd.Context().Err() != nil {
			return err // stopped (a FIFO with no writer, a silent pipe): not a usage error
		} else if err != nil {
			return usage.Wrap(err)
		}
		ff := format
		if ff == "" {
			if ff, err = foreign.Detect(data); err != nil {
				return usage.Wrap(fmt.Errorf("%s: %w", file, err))
			}
		}
		src := f.source
		if src == "" {
			src = fmt.Sprintf("%s: %s", ff, filepath.Base(file))
		}
		recs, err := foreign.Parse(data, ff, foreign.Options{Source: src, Target: f.target, RPC: f.rpc, ConnMode: f.conn})
		if err != nil {
			return usage.Wrap(fmt.Errorf("%s: %w", file, err))
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %d records (%s)\n", file, len(recs), ff)
		all = append(all, recs...)
	}
	var b bytes.Buffer
	w := result.NewWriter(&b)
	for i := range all {
		if err := w.Write(all[i]); err != nil {
			return fmt.Errorf("import: record %d: %w", i+1, err)
		}
	}
	// Written whole or not at all (lab.WriteFileContext: a temporary file beside
	// --out, renamed; a device or a FIFO with its reader written directly).
	if err := lab.WriteFileContext(cmd.Context(), f.out, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
		return fmt.Errorf("--out %s: %w", f.out, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "rpclab: %d records written to %s\n", len(all), f.out)
	return nil
}

func isFormat(f foreign.Format) bool {
	for _, k := range foreign.Formats {
		if k == f {
			return true
		}
	}
	return false
}
