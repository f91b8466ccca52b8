// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rpclab/rpclab/result"
)

// ErrEmpty reports a results file without a single record.
var ErrEmpty = errors.New("no result records")

// Run is the records of one results file. Several runs overlay in one
// report (before and after a change).
type Run struct {
	// Name labels the run in legends, tables and verdicts; Load uses the
	// file's base name (the path when two base names are the same).
	Name    string
	Records []result.Record
}

// Load reads results files, one Run per file, in the order given. A
// truncated last line (a writer killed mid-line) is skipped with a warning
// and the records before it are kept. Any other bad line, an unknown schema
// version or a file without records is an error naming the file. A file
// that mixes targets is kept, with a warning: each target gets its own
// charts.
func Load(paths []string) (runs []Run, warnings []string, err error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("report: no results files given")
	}
	names := runNames(paths)
	for i, p := range paths {
		recs, err := result.ReadFile(p)
		why := "the file is empty or blank"
		if err != nil {
			var le *result.LineError
			if !errors.Is(err, result.ErrTruncated) || !errors.As(err, &le) {
				return nil, nil, fmt.Errorf("report: %w", err)
			}
			why = "its only record is truncated"
			warnings = append(warnings, fmt.Sprintf("%s: line %d is truncated (a writer stopped mid-line); skipped it and kept the %d records before it", p, le.Line, len(recs)))
		}
		if len(recs) == 0 {
			return nil, nil, fmt.Errorf("report: %s: %w (%s)", p, ErrEmpty, why)
		}
		if ts := targets(recs); len(ts) > 1 {
			warnings = append(warnings, fmt.Sprintf("%s: records of %d targets (%s); each target gets its own charts", p, len(ts), strings.Join(ts, ", ")))
		}
		runs = append(runs, Run{Name: names[i], Records: recs})
	}
	if len(runs) > 1 && !shareGroup(runs) {
		warnings = append(warnings, "the files share no group (same client, target, RPC kind and payload): nothing overlays, each is charted on its own")
	}
	return runs, warnings, nil
}

// runNames labels each path by its base name, or by the whole path when base
// names collide.
func runNames(paths []string) []string {
	count := map[string]int{}
	for _, p := range paths {
		count[filepath.Base(p)]++
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
		if count[out[i]] > 1 {
			out[i] = p
		}
	}
	return out
}

// TargetLabel names what a record measured against. A server that rpclab
// started itself listens on a random loopback port each run, so its records
// are labelled by the server's implementation instead ("rpclab go server"),
// and runs of the same setup compare.
func TargetLabel(r *result.Record) string {
	if r.Spec.Server != "" {
		return "rpclab " + r.Spec.Server + " server"
	}
	return r.Spec.Target
}

func targets(recs []result.Record) []string {
	seen := map[string]bool{}
	var out []string
	for i := range recs {
		t := TargetLabel(&recs[i])
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

func shareGroup(runs []Run) bool {
	seen := map[groupKey]int{}
	for i, run := range runs {
		for j := range run.Records {
			k := keyOf(&run.Records[j])
			if prev, ok := seen[k]; ok && prev != i {
				return true
			}
			seen[k] = i
		}
	}
	return false
}
