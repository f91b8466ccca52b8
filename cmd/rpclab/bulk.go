// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/bulk"
	"github.com/rpclab/rpclab/report"
)

func newBulkCmd() *cobra.Command {
	var (
		spec                bulk.Spec
		sizes, chunks       []string
		warmup, maxMsg, out string
		charts              string
		nf                  netemFlags
		noPin, force        bool
	)
	cmd := &cobra.Command{
		Use:   "bulk",
		Short: "Measure what moving bytes costs over gRPC against raw TCP, HTTP/1.1, h2c and a sidechannel",
		Long: `Download --size bytes per request from the rpclab server, a deterministic
stream the server sends in --chunk pieces (like a Git fetch: the client asks,
the server streams), over each --transport:

  grpc         server-streaming RPC of chunk-sized messages, grpc-go defaults
  grpc-tuned   the same RPC with a zero-copy codec, 1 MiB I/O buffers and
               large flow-control windows (docs/bulk.md lists each setting)
  tcp          raw TCP: a 16-byte request, then the bytes (the floor)
  http1, http2 net/http GET over HTTP/1.1 and over h2c
  sidechannel  a gRPC call carries the request and the status; the bytes
               flow over a raw TCP connection the call names by token

Every download is checked for length and CRC-32C. For each step it reports
MB/s, CPU seconds per GiB of the client and of the server, the server's Go
heap bytes allocated per MiB and allocations per request, and the peak RSS
of both processes. Without --target it starts "rpclab serve" as a child
process, pinned to the last CPU, and pins itself to the others.`,
		Example: `  rpclab bulk --size 1GiB --chunk 64KiB
  rpclab bulk --size 64MiB,256MiB,1GiB --chunk 64KiB --transport grpc,grpc-tuned --out bulk.jsonl
  rpclab bulk --size 256MiB --chunk 1MiB --streams 1,4 --duration 5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stderr := cmd.ErrOrStderr()
			parse := func(flag string, vals []string) ([]int64, error) {
				var ns []int64
				for _, v := range vals {
					n, err := bulk.ParseBytes(v)
					if err != nil {
						return nil, usageError{fmt.Errorf("--%s: %w", flag, err)}
					}
					ns = append(ns, n)
				}
				return ns, nil
			}
			var err error
			if spec.Sizes, err = parse("size", sizes); err != nil {
				return err
			}
			cs, err := parse("chunk", chunks)
			if err != nil {
				return err
			}
			spec.Chunks = nil
			for _, c := range cs {
				if c > 1<<31-1 {
					return usageError{fmt.Errorf("--chunk %s is too large", bulk.FormatBytes(c))}
				}
				spec.Chunks = append(spec.Chunks, int(c))
			}
			spec.Warmup = -1
			if warmup != "" {
				w, err := parse("warmup", []string{warmup})
				if err != nil {
					return err
				}
				spec.Warmup = w[0]
			}
			if maxMsg != "" {
				m, err := parse("max-message-size", []string{maxMsg})
				if err != nil {
					return err
				}
				if m[0] > 1<<31-1 {
					return usageError{fmt.Errorf("--max-message-size %s is above 2 GiB", maxMsg)}
				}
				spec.MaxMessage = int(m[0])
			}
			if cmd.Flags().Changed("duration") && cmd.Flags().Changed("requests") {
				return usageError{errors.New("--requests and --duration exclude each other")}
			}
			// Check the spec before starting a server for it.
			check := spec
			if check.Target == "" {
				check.Target = "127.0.0.1:0"
			}
			if err := check.Validate(); err != nil {
				return usageError{err}
			}

			recs, err := runBulk(cmd, &spec, &bulkOutputs{out: out, charts: charts, force: force}, &nf, noPin)
			if len(recs) > 0 {
				stdout := cmd.OutOrStdout()
				fmt.Fprintln(stdout)
				if terr := report.BulkTable(stdout, recs); terr != nil {
					return terr
				}
				if out != "" {
					fmt.Fprintf(stderr, "rpclab: %d records written to %s\n", len(recs), out)
				}
				if charts != "" {
					if cerr := writeBulkCharts(charts, recs); cerr != nil {
						return cerr
					}
					fmt.Fprintf(stderr, "rpclab: charts written to %s\n", charts)
				}
			}
			var ue *bulk.UsageError
			if errors.As(err, &ue) {
				return usageError{err}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Target, "target", "", "host:port of an rpclab server (default: start one as a child process on a free loopback port)")
	f.StringSliceVar(&spec.Transports, "transport", bulk.Transports, "transports to measure (comma-separated)")
	f.StringSliceVar(&sizes, "size", []string{"1GiB"}, "bytes per download (comma-separated; units B, KiB, MiB, GiB or kB, MB, GB)")
	f.StringSliceVar(&chunks, "chunk", []string{"16KiB", "64KiB", "1MiB"}, "message (gRPC) or write size (others), comma-separated")
	f.IntSliceVar(&spec.Streams, "streams", []int{1}, "concurrent downloads, each on its own connection (comma-separated)")
	f.IntVar(&spec.RequestsPerStream, "requests", 1, "downloads per stream in each step")
	f.DurationVar(&spec.MinDuration, "duration", 0, "instead of --requests: keep downloading for this long per step")
	f.StringVar(&warmup, "warmup", "", "bytes each stream downloads before a step, unmeasured (default: min(size, 8MiB); 0: none)")
	f.StringVar(&maxMsg, "max-message-size", "", "gRPC client max receive message size (default: grpc-go's 4MiB); raise it for chunks of 4MiB and more")
	f.StringVar(&out, "out", "", "write the records as JSON Lines to this file (docs/bulk.schema.json); an existing non-empty file is refused unless --force")
	f.BoolVar(&force, "force", false, "overwrite an existing --out file")
	f.StringVar(&charts, "charts", "", "write SVG charts (throughput and CPU per GiB against chunk, server allocation per MiB against size) into this folder")
	nf.register(f)
	f.BoolVar(&noPin, "no-pin", false, "do not pin the child server and this process to separate CPUs")
	return cmd
}

// writeBulkCharts writes each of report.BulkFigures as an SVG file in dir.
func writeBulkCharts(dir string, recs []bulk.Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--charts: %w", err)
	}
	n := map[string]int{}
	for _, f := range report.BulkFigures(recs) {
		svg, err := f.SVG()
		if err != nil {
			return fmt.Errorf("--charts: %w", err)
		}
		n[f.Kind]++
		name := filepath.Join(dir, fmt.Sprintf("%s-%d.svg", f.Kind, n[f.Kind]))
		if err := os.WriteFile(name, svg, 0o644); err != nil {
			return fmt.Errorf("--charts: %w", err)
		}
	}
	return nil
}
