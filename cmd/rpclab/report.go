// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/report"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/internal/verdict"
)

func newReportCmd() *cobra.Command {
	var out, pngDir string
	var force bool
	cmd := &cobra.Command{
		Use:   "report FILE.jsonl...",
		Short: "Write an HTML report with charts (and PNGs) from result files",
		Long:  reportDoc,
		Example: `  rpclab report rpclab-results.jsonl -o report.html
  rpclab report before.jsonl after.jsonl -o compare.html
  rpclab report docs/published/ydb-2025-single-connection.jsonl ydb-local.jsonl -o ydb.html
  rpclab report results.jsonl --png docs/img`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			if pngDir != "" && !cmd.Flags().Changed("out") {
				out = "" // --png alone writes only the PNGs
			}
			if out == "" && pngDir == "" {
				return usage.Wrap(errors.New("report: give -o FILE.html, --png DIR, or both"))
			}
			if err := checkReportOutputs(files, force, out, pngDir); err != nil {
				return err
			}
			res, warnings, err := report.Load(cmd.Context(), files)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			for _, w := range warnings {
				fmt.Fprintln(stderr, "rpclab: warning:", w)
			}
			printRunVerdicts(cmd.OutOrStdout(), res)
			if out != "" {
				if err := writeHTML(out, func(w io.Writer) error { return report.HTML(w, res, warnings) }); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "report written to", absPath(out))
			}
			if pngDir != "" {
				paths, err := report.WritePNGs(pngDir, res)
				if err != nil {
					return err
				}
				for _, p := range paths {
					fmt.Fprintln(cmd.OutOrStdout(), "chart written to", p)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "report.html", "write the HTML report to this file (skipped when only --png is given)")
	cmd.Flags().StringVar(&pngDir, "png", "", "also write every chart as a PNG file in this directory")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing -o file (never a records file)")
	return cmd
}

// reportDoc is report's help.
const reportDoc = `Read result files (JSON Lines, as rpclab writes them: ping records of
sweep, demo, compare and every rpclab client, bulk records of "rpclab bulk",
flow records of "rpclab flow"; a file may mix kinds) and write one
self-contained HTML report, with a section per kind. For ping records: for every group of records (same client
language, target, RPC kind and payload) throughput against in-flight beside
the ideal line, P50/P99/P99.9 latency, efficiency (throughput over the ideal
line) and client CPU per RPC, the table of every record, and the verdict on
whether the client's connection is the bottleneck. The page needs no network:
charts are inline SVG, with no scripts or fonts to fetch.

Give two files or more to overlay runs, e.g. before and after adopting a
connection pool: every chart shows both, labelled by file name, and a table
compares the last file with the first.

Records of "rpclab import" (they carry source: a published curve, another
tool's run) are measured elsewhere, so their target never matches a local
one: they overlay every local group with the same client language, RPC
kind, payload and load model, labelled "(imported)" beside "(local)". Such
a group gains a speed-up chart (throughput over each run's own in-flight-1
throughput, with the ideal y = x), which compares the curves' shapes when
their scales differ. Each run keeps its own ideal line and verdict.

Bulk and flow records get their own section: the table "rpclab bulk" or
"rpclab flow" prints, and their charts.

A truncated last line (a run that was killed) is skipped with a warning. An
empty file, a bad line, an unknown kind or schema version is an error naming
the file and line.`

// printRunVerdicts prints each file's verdict on its ping records, word
// for word what rpclab sweep and rpclab doctor print for the same records
// (verdict.Verdicts: one judge).
func printRunVerdicts(w io.Writer, res *report.Results) {
	for _, run := range res.Runs {
		fmt.Fprintf(w, "Verdict on %s:\n%s\n", run.Name, verdict.Text(verdict.Verdicts(run.Records)))
	}
}

// writeHTML renders a whole report with render into the file, replacing
// it only once the render succeeded (lab.WriteFile): a failed render
// leaves no half-written report, and an earlier file as it was.
func writeHTML(path string, render func(io.Writer) error) error {
	return lab.WriteFile(path, render)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
