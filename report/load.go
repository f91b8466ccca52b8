// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/verdict"
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
// charts. A file that mixes emulated networks (two sweeps appended, with and
// without --delay) becomes a run per network, named after it, so that the
// runs overlay instead of mixing in one line.
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
		nets := byNetwork(recs)
		if len(nets) == 1 {
			runs = append(runs, Run{Name: names[i], Records: recs})
			continue
		}
		labels := make([]string, len(nets))
		for j, n := range nets {
			labels[j] = n.label
			runs = append(runs, Run{Name: names[i] + " (" + n.label + ")", Records: n.recs})
		}
		warnings = append(warnings, fmt.Sprintf("%s: records of %d emulated networks (%s); each is a run of its own", p, len(nets), strings.Join(labels, "; ")))
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

type netRecords struct {
	label string
	recs  []result.Record
}

// byNetwork splits records by their emulated network, in order of first
// appearance.
func byNetwork(recs []result.Record) []netRecords {
	var out []netRecords
	at := map[string]int{}
	for _, r := range recs {
		l := NetemLabel(r.Spec.Netem)
		i, ok := at[l]
		if !ok {
			i = len(out)
			at[l] = i
			out = append(out, netRecords{label: l})
		}
		out[i].recs = append(out[i].recs, r)
	}
	return out
}

// NetemLabel names an emulated network: "RTT 5ms", with jitter and rate
// when set, per direction when the directions differ; "no netem" for nil.
func NetemLabel(n *result.NetemSpec) string {
	if n == nil {
		return "no netem"
	}
	link := func(l result.NetemLink) string {
		s := time.Duration(l.DelayNS).String()
		if l.JitterNS > 0 {
			s += " ±" + time.Duration(l.JitterNS).String()
		}
		if l.RateBps > 0 {
			s += " " + rateLabel(l.RateBps)
		}
		return s
	}
	if n.Up == n.Down {
		s := "RTT " + time.Duration(2*n.Up.DelayNS).String()
		if n.Up.JitterNS > 0 {
			s += ", jitter ±" + time.Duration(n.Up.JitterNS).String() + " each way"
		}
		if n.Up.RateBps > 0 {
			s += ", " + rateLabel(n.Up.RateBps) + " each way"
		}
		return s
	}
	return "up " + link(n.Up) + ", down " + link(n.Down)
}

// TargetLabel names what a record measured against. A server that rpclab
// started itself listens on a random loopback port each run, so its records
// are labelled by the server's implementation instead ("rpclab go server"),
// and runs of the same setup compare.
func TargetLabel(r *result.Record) string { return verdict.TargetLabel(r) }

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
