// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/report"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// writeResults prints a sweep's tables and verdict (with compare, the
// client table; on workers, the worker table) and writes the CSV and, for
// demo and compare, the HTML report and PNG charts.
func writeResults(cmd *cobra.Command, s *lab.Session, sf *sweepFlags, open *loadgen.OpenSpec, recs []result.Record) error {
	if len(recs) == 0 {
		return nil
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	fmt.Fprintln(stdout)
	table := report.Table
	if open != nil {
		table = report.OpenTable
	}
	if err := table(stdout, recs); err != nil {
		return err
	}
	if sf.csv != "" {
		if err := lab.WriteFile(sf.csv, func(w io.Writer) error { return report.CSV(w, recs) }); err != nil {
			return fmt.Errorf("--csv: %w", err)
		}
	}
	fmt.Fprintln(stdout)
	if open == nil { // the verdict reads closed-loop in-flight series
		printVerdict(stdout, recs)
	} else {
		ptrs := make([]*result.Record, len(recs))
		for i := range recs {
			ptrs[i] = &recs[i]
		}
		if b := verdict.Busy(ptrs); b != nil { // said first, as the verdict does
			fmt.Fprintln(stdout, b.Text())
		}
		if slo := sf.open.objective; slo != nil {
			report.SLOText(stdout, slo.String(), verdict.SLOResults(*slo, recs))
		}
	}
	if len(sf.clients) > 0 {
		fmt.Fprintln(stdout)
		if err := report.ClientTable(stdout, recs); err != nil {
			return err
		}
	}
	if len(sf.workers.addrs) > 0 {
		fmt.Fprintln(stdout)
		if err := report.WorkerTable(stdout, recs); err != nil {
			return err
		}
	}
	if n := s.Written(); sf.out != "" && n > 0 { // what reached the file, not what was measured
		fmt.Fprintf(stderr, "rpclab: %d records written to %s\n", n, sf.out)
	}
	if sf.report == "" {
		return nil
	}
	res := &report.Results{Runs: []report.Run{{Name: "rpclab " + cmd.Name(), Records: recs}}} // demo, compare
	if err := writeHTML(sf.report, func(w io.Writer) error { return report.HTML(w, res, nil) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rpclab: report with charts written to %s\n", absPath(sf.report))
	if sf.png != "" {
		paths, err := report.WritePNGs(sf.png, res)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "rpclab: %d charts written to %s\n", len(paths), sf.png)
	}
	return nil
}

// printVerdict prints a closed-loop sweep's verdict and its connection
// notes: the one-machine sweep's and the sweep on workers'.
func printVerdict(stdout io.Writer, recs []result.Record) {
	fmt.Fprintln(stdout, verdict.Text(verdict.Verdicts(recs)))
	for _, n := range verdict.ConnNotes(recs) {
		fmt.Fprintln(stdout, "Note:", n)
	}
}

// keptSteps says how many steps an interrupted sweep measured and kept,
// and how many it kept only to say where it was cut off.
func keptSteps(recs []result.Record) string {
	m := lab.Measured(recs)
	if cut := len(recs) - m; cut > 0 {
		return fmt.Sprintf("%d steps measured and kept, %d cut off before measuring", m, cut)
	}
	return fmt.Sprintf("%d steps measured and kept", m)
}
