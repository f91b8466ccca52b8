// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/verdict"
)

// ErrEmpty reports a results file without a single record; it is
// result.ErrNoRecords, so validate and report say the same.
var ErrEmpty = result.ErrNoRecords

// Run is the ping records of one results file. Several runs overlay in one
// report (before and after a change).
type Run struct {
	// Name labels the run in legends, tables and verdicts; Load uses the
	// file's base name (the path when two base names are the same).
	Name    string
	Records []result.Record
}

// Load reads results files of every kind (ping, bulk, flow; a file may
// mix them), in the order given. Ping records make one Run per file. A
// truncated last line (a writer killed mid-line) is skipped with a warning
// and the records before it are kept. Any other bad line, an unknown kind
// or schema version, or a file without records is an error naming the
// file. A file whose ping records mix targets is kept, with a warning:
// each target gets its own charts. A file that mixes emulated networks
// (two sweeps appended, with and without --delay) becomes a run per
// network, named after it, so that the runs overlay instead of mixing in
// one line. A record whose latencies exceeded the histogram's range
// (latency_clamped) gets a warning. Reading stops when ctx is done.
func Load(ctx context.Context, paths []string) (res *Results, warnings []string, err error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("report: no results files given")
	}
	res = &Results{Names: runNames(paths)}
	var runs []Run
	for i, p := range paths {
		set, err := result.ReadAllFile(ctx, p)
		why := "the file is empty or blank"
		if err != nil {
			var le *result.LineError
			if !errors.Is(err, result.ErrTruncated) || !errors.As(err, &le) {
				if errors.Is(err, result.ErrNoRecords) {
					return nil, nil, fmt.Errorf("report: %s: %w (%s)", p, ErrEmpty, why)
				}
				return nil, nil, fmt.Errorf("report: %w", err)
			}
			why = "its only record is truncated"
			warnings = append(warnings, fmt.Sprintf("%s: line %d is truncated (a writer stopped mid-line); skipped it and kept the %d records before it", p, le.Line, set.Len()))
		}
		if set.Len() == 0 {
			return nil, nil, fmt.Errorf("report: %s: %w (%s)", p, ErrEmpty, why)
		}
		res.Bulk = append(res.Bulk, set.Bulk...)
		res.Flow = append(res.Flow, set.Flow...)
		res.Live = append(res.Live, set.Live...)
		recs := set.Ping
		if w := clampedWarning(p, recs); w != "" {
			warnings = append(warnings, w)
		}
		if len(recs) == 0 {
			continue
		}
		if ts := targets(recs); len(ts) > 1 {
			warnings = append(warnings, fmt.Sprintf("%s: records of %d targets (%s); each target gets its own charts", p, len(ts), strings.Join(ts, ", ")))
		}
		nets := byNetwork(recs)
		if len(nets) == 1 {
			runs = append(runs, Run{Name: res.Names[i], Records: recs})
			continue
		}
		labels := make([]string, len(nets))
		for j, n := range nets {
			labels[j] = n.label
			runs = append(runs, Run{Name: res.Names[i] + " (" + n.label + ")", Records: n.recs})
		}
		warnings = append(warnings, fmt.Sprintf("%s: records of %d emulated networks (%s); each is a run of its own", p, len(nets), strings.Join(labels, "; ")))
	}
	if len(runs) > 1 && !shareGroup(runs) {
		warnings = append(warnings, "the files share no group (same client, RPC kind, payload and load model, and the same target unless a record is imported): nothing overlays, each is charted on its own")
	}
	res.Runs = runs
	return res, warnings, nil
}

// clampedWarning says which records of a file had latencies above the
// histogram's range; "" when none did.
func clampedWarning(path string, recs []result.Record) string {
	var n int
	var total int64
	for i := range recs {
		if recs[i].LatencyClamped > 0 {
			n++
			total += recs[i].LatencyClamped
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d record(s) have %d RPC(s) slower than the histogram's range (%v), counted as %v (latency_clamped): their highest latency quantiles are a floor, not a measurement",
		path, n, total, time.Duration(stats.HighestTrackable), time.Duration(stats.HighestTrackable))
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
			s += " " + result.FormatRate(l.RateBps)
		}
		return s
	}
	if n.Up == n.Down {
		s := "RTT " + time.Duration(2*n.Up.DelayNS).String()
		if n.Up.JitterNS > 0 {
			s += ", jitter ±" + time.Duration(n.Up.JitterNS).String() + " each way"
		}
		if n.Up.RateBps > 0 {
			s += ", " + result.FormatRate(n.Up.RateBps) + " each way"
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

// shareGroup says whether records of two runs or more are charted
// together: in one group, or imported records overlaid on local ones.
func shareGroup(runs []Run) bool {
	for _, a := range group(runs) {
		for _, rr := range a.rows[1:] {
			if rr.Run != a.rows[0].Run {
				return true
			}
		}
	}
	return false
}
