// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/report"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// bulkFlags are rpclab bulk's flags.
type bulkFlags struct {
	spec                bulk.Spec
	sizes, chunks       []string
	warmup, maxMsg, out string
	charts              string
	nf                  netemFlags
	noPin, force        bool
	tls                 bulkTLS
}

func newBulkCmd() *cobra.Command {
	var bf bulkFlags
	cmd := &cobra.Command{
		Use:   "bulk",
		Short: "Measure what moving bytes costs over gRPC against raw TCP, HTTP/1.1, h2c and a sidechannel",
		Long: `Download --size bytes per request from the rpclab server, a deterministic
stream the server sends in --chunk pieces (like a Git fetch: the client asks,
the server streams), over each --transport:

  grpc         server-streaming RPC of chunk-sized messages, grpc-go defaults
  grpc-tuned   the same RPC through package bulkcodec: its zero-copy codec
               and dial options (a 1 MiB read buffer; docs/bulk.md lists
               each setting tried)
  tcp          raw TCP: a 16-byte request, then the bytes (the floor)
  http1, http2 net/http GET over HTTP/1.1 and over h2c
  sidechannel  package sidechannel: a gRPC call carries the request and the
               status; the bytes flow over a plain connection to the same
               port, which the call names by id

Every download is checked for length and CRC-32C. For each step it reports
MB/s, CPU seconds per GiB of the client and of the server, the server's Go
heap bytes allocated per MiB and allocations per request, and the peak RSS
of both processes. Without --target it starts "rpclab serve" as a child
process, pinned to the last CPU, and pins itself to the others.

With --tls every transport runs over TLS: tcp inside crypto/tls (the
reference), grpc and grpc-tuned with TLS credentials, http1 and http2 over
TLS (h2 by ALPN instead of h2c), the sidechannel with its TLS option.
Without --target the child server gets a fresh self-signed certificate
(ECDSA P-256, made in memory, written 0600 to a temporary folder for the
child to read and removed when the run ends) and this process trusts that
certificate alone; with --target it trusts --cacert, or the system's roots.`,
		Example: `  rpclab bulk --size 1GiB --chunk 64KiB
  rpclab bulk --size 64MiB,256MiB,1GiB --chunk 64KiB --transport grpc,grpc-tuned --out bulk.jsonl
  rpclab bulk --size 256MiB --chunk 1MiB --streams 1,4 --duration 5s
  rpclab bulk --size 1GiB --chunk 64KiB --transport tcp,grpc,grpc-tuned,sidechannel --tls`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bf.parse(cmd.Flags()); err != nil {
				return err
			}
			recs, err := runBulk(cmd, &bf.spec, &bulkOutputs{out: bf.out, charts: bf.charts, force: bf.force}, &bf.nf, bf.noPin, &bf.tls)
			return bf.finish(cmd, recs, err)
		},
	}
	bf.register(cmd.Flags())
	return cmd
}

// parse maps the flags to bf.spec and checks it before any server starts.
func (bf *bulkFlags) parse(fs *pflag.FlagSet) error {
	parse := func(flag string, vals []string) ([]int64, error) {
		var ns []int64
		for _, v := range vals {
			n, err := result.ParseBytes(v)
			if err != nil {
				return nil, usage.Wrap(fmt.Errorf("--%s: %w", flag, err))
			}
			ns = append(ns, n)
		}
		return ns, noDuplicates("--"+flag, vals, func(v string) int64 { n, _ := result.ParseBytes(v); return n })
	}
	if err := noDuplicates("--transport", bf.spec.Transports, func(t string) string { return t }); err != nil {
		return err
	}
	if err := noDuplicates("--streams", bf.spec.Streams, func(n int) int { return n }); err != nil {
		return err
	}
	var err error
	if bf.spec.Sizes, err = parse("size", bf.sizes); err != nil {
		return err
	}
	cs, err := parse("chunk", bf.chunks)
	if err != nil {
		return err
	}
	bf.spec.Chunks = nil
	for _, c := range cs {
		if c > 1<<31-1 {
			return usage.Wrap(fmt.Errorf("--chunk %s is too large", result.FormatBytes(c)))
		}
		bf.spec.Chunks = append(bf.spec.Chunks, int(c))
	}
	bf.spec.Warmup = -1
	if bf.warmup != "" {
		w, err := parse("warmup", []string{bf.warmup})
		if err != nil {
			return err
		}
		bf.spec.Warmup = w[0]
	}
	if bf.maxMsg != "" {
		m, err := parse("max-message-size", []string{bf.maxMsg})
		if err != nil {
			return err
		}
		if m[0] > 1<<31-1 {
			return usage.Wrap(fmt.Errorf("--max-message-size %s is above 2 GiB", bf.maxMsg))
		}
		bf.spec.MaxMessage = int(m[0])
	}
	if bf.spec.RequestsPerStream < 1 {
		return usage.Wrap(fmt.Errorf("--requests %d: each stream makes at least 1 download", bf.spec.RequestsPerStream))
	}
	if fs.Changed("duration") && fs.Changed("requests") {
		return usage.Wrap(errors.New("--requests and --duration exclude each other"))
	}
	if err := bf.tls.parse(bf.spec.Target); err != nil {
		return err
	}
	// Check the spec before starting a server for it.
	check := bf.spec
	if check.Target == "" {
		check.Target = "127.0.0.1:0"
	}
	return check.Validate()
}

// finish prints the table and writes the charts of what was measured,
// then maps err to an exit code.
func (bf *bulkFlags) finish(cmd *cobra.Command, recs []result.BulkRecord, err error) error {
	stderr := cmd.ErrOrStderr()
	if len(recs) > 0 {
		stdout := cmd.OutOrStdout()
		fmt.Fprintln(stdout)
		if terr := report.BulkTable(stdout, recs); terr != nil {
			return terr
		}
		written := len(recs)
		if we := (*lab.WriteError)(nil); errors.As(err, &we) {
			written = we.Written // what reached the file, not what was measured
		}
		if bf.out != "" && written > 0 {
			fmt.Fprintf(stderr, "rpclab: %d records written to %s\n", written, bf.out)
		}
		if bf.charts != "" {
			if cerr := writeBulkCharts(bf.charts, recs); cerr != nil {
				return cerr
			}
			fmt.Fprintf(stderr, "rpclab: charts written to %s\n", bf.charts)
		}
	}
	return err
}

func (bf *bulkFlags) register(f *pflag.FlagSet) {
	f.StringVar(&bf.spec.Target, "target", "", "host:port of an rpclab server (default: start one as a child process on a free loopback port)")
	f.StringSliceVar(&bf.spec.Transports, "transport", bulk.Transports, "transports to measure (comma-separated)")
	f.StringSliceVar(&bf.sizes, "size", []string{"1GiB"}, "bytes per download (comma-separated; units B, KiB, MiB, GiB or kB, MB, GB)")
	f.StringSliceVar(&bf.chunks, "chunk", []string{"16KiB", "64KiB", "1MiB"}, "message (gRPC) or write size (others), comma-separated")
	f.IntSliceVar(&bf.spec.Streams, "streams", []int{1}, "concurrent downloads, each on its own connection (comma-separated)")
	f.IntVar(&bf.spec.RequestsPerStream, "requests", 1, "downloads per stream in each step")
	f.DurationVar(&bf.spec.MinDuration, "duration", 0, "instead of --requests: keep downloading for this long per step")
	f.StringVar(&bf.warmup, "warmup", "", "bytes each stream downloads before a step, unmeasured (default: min(size, 8MiB); 0: none)")
	f.StringVar(&bf.maxMsg, "max-message-size", "", "gRPC client max receive message size (default: grpc-go's 4MiB); raise it for chunks of 4MiB and more")
	f.StringVar(&bf.out, "out", "", "write the records as JSON Lines to this file (schema/bulk.schema.json); an existing non-empty file is refused unless --force")
	f.BoolVar(&bf.force, "force", false, "overwrite an existing --out file")
	f.StringVar(&bf.charts, "charts", "", "write SVG charts (throughput and CPU per GiB against chunk, server allocation per MiB against size) into this folder")
	f.BoolVar(&bf.tls.on, "tls", false, "run every transport over TLS (without --target: the child server gets a fresh self-signed certificate, trusted alone)")
	f.StringVar(&bf.tls.caFile, "cacert", "", "with --tls and --target: PEM file of CA certificates to trust (default: the system roots)")
	bf.nf.register(f)
	f.BoolVar(&bf.noPin, "no-pin", false, "do not pin the child server and this process to separate CPUs")
}

// writeBulkCharts writes each chart of the bulk records as an SVG file in
// dir, named after the chart ("bulk-throughput-1.svg").
func writeBulkCharts(dir string, recs []result.BulkRecord) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--charts: %w", err)
	}
	for _, c := range (report.BulkSection{Records: recs}).Charts() {
		svg, err := c.SVG()
		if err != nil {
			return fmt.Errorf("--charts: %w", err)
		}
		name := filepath.Join(dir, c.Name+".svg")
		if err := os.WriteFile(name, svg, 0o644); err != nil {
			return fmt.Errorf("--charts: %w", err)
		}
	}
	return nil
}

// bulkTLS are rpclab bulk's TLS flags: --tls, and --cacert with --target.
type bulkTLS struct {
	on     bool
	caFile string
	roots  *x509.CertPool // --cacert's; nil: the system's (or the child's own certificate)
}

// parse checks the flags against target and reads --cacert, so a bad one
// is a usage error before any server starts.
func (bt *bulkTLS) parse(target string) error {
	if bt.caFile == "" {
		return nil
	}
	if !bt.on {
		return usage.Wrap(errors.New("--cacert needs --tls"))
	}
	if target == "" {
		return usage.Wrap(errors.New("--cacert needs --target: without one, the child server gets a fresh certificate that rpclab trusts alone"))
	}
	pool, err := dyncall.LoadCACert(bt.caFile)
	if err != nil {
		return usage.Wrap(fmt.Errorf("--cacert: %w", err))
	}
	bt.roots = pool
	return nil
}

// clientConfig is the client's TLS configuration for a --target run (nil
// without --tls).
func (bt *bulkTLS) clientConfig() *tls.Config {
	if !bt.on {
		return nil
	}
	return &tls.Config{RootCAs: bt.roots, MinVersion: tls.VersionTLS12}
}
