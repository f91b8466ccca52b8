// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
)

// SustainedShare: an open-loop step sustained its offered rate when its
// throughput was at least this share of the rate.
const SustainedShare = 0.95

// SLO is a latency objective: the quantile Q of latency (measured from the
// intended send time) must be at most Bound.
type SLO struct {
	Name  string // "p99"
	Q     float64
	Bound time.Duration
}

// String gives the pNN=DURATION syntax back.
func (s SLO) String() string { return s.Name + "=" + s.Bound.String() }

// ParseSLO parses "p99=1ms" (p50, p90, p99, p999, p100 for the largest, or
// pNN.N). Its errors wrap ErrBadSLO.
func ParseSLO(s string) (*SLO, error) {
	name, bound, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || !strings.HasPrefix(name, "p") {
		return nil, fmt.Errorf("%w: %q: want pNN=DURATION, e.g. p99=1ms", ErrBadSLO, s)
	}
	digits := name[1:]
	var q float64
	switch {
	case digits == "999":
		q = 99.9
	default:
		// Decimal digits only: ParseFloat also takes "NaN", "Inf", hex
		// and exponents, and NaN passes every range comparison.
		v, err := strconv.ParseFloat(digits, 64)
		if err != nil || !quantileDigits(digits) || !(v > 0 && v <= 100) {
			return nil, fmt.Errorf("%w: %q: unknown quantile %q (want p50, p90, p99, p999)", ErrBadSLO, s, name)
		}
		q = v
	}
	d, err := time.ParseDuration(bound)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("%w: %q: bound must be a positive duration such as 1ms", ErrBadSLO, s)
	}
	return &SLO{Name: name, Q: q, Bound: d}, nil
}

// quantileDigits reports whether s is a plain decimal: digits with at
// most one point between them ("99", "99.5").
func quantileDigits(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	return allDigits(whole) && (frac == "" && !strings.HasSuffix(s, ".") || allDigits(frac))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Sustained reports whether rec kept up with its offered rate within s: it
// completed, no RPC failed, the send bound was never hit, throughput was at
// least SustainedShare of the rate, and the quantile was within the bound.
// why says what failed.
func (s SLO) Sustained(rec *result.Record) (ok bool, why string) {
	switch {
	case Stalled(rec):
		return false, "step stalled"
	case rec.Status != result.StatusOK:
		return false, "step " + rec.Status
	case len(rec.Errors) > 0:
		return false, "RPCs failed"
	case rec.MaxOutstandingHits != nil && *rec.MaxOutstandingHits > 0:
		return false, "max outstanding reached"
	case rec.ThroughputRPS < SustainedShare*rec.Spec.RateRPS:
		return false, fmt.Sprintf("throughput %.0f rps below %.0f%% of the offered rate", rec.ThroughputRPS, 100*SustainedShare)
	}
	h, err := stats.DecodeHistogram(rec.HistogramHDR)
	if err != nil {
		return false, err.Error()
	}
	if v := time.Duration(h.ValueAtQuantile(s.Q)); v > s.Bound {
		return false, fmt.Sprintf("%s %v above %v", s.Name, v, s.Bound)
	}
	return true, ""
}

// SLOResult is the highest rate one layout sustained within the SLO.
type SLOResult struct {
	// Conn names the layout as --conn spells it.
	Conn     string
	RPC      string
	Inflight int
	// MaxRate is the highest rate sustained (0: none of those tried).
	MaxRate float64
	// Missed is the first rate that missed the SLO and why (0: none did).
	Missed    float64
	MissedWhy string
}

// Missed reports whether rec missed s (see Sustained): the stop predicate
// of an open-loop sweep that ends each layout's rates at its first miss
// (loadgen.OpenSpec.Stop).
func (s SLO) Missed(rec *result.Record) bool {
	ok, _ := s.Sustained(rec)
	return !ok
}

// SLOResults judges an open-loop sweep's records against s, as Verdicts
// judges a closed-loop sweep's: for each layout (connection layout, RPC
// kind and in-flight count, in the order first seen), the highest rate
// sustained below the first that missed (rates ascending), and that miss
// with why. Records of other load models are left out.
func SLOResults(s SLO, recs []result.Record) []SLOResult {
	type key struct {
		conn, rpc string
		inflight  int
	}
	var order []key
	byKey := map[key][]*result.Record{}
	for i := range recs {
		r := &recs[i]
		if r.Spec.LoadModel != "open" {
			continue
		}
		k := key{r.Spec.ConnLabel(), r.Spec.RPC, r.Spec.Inflight}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	out := make([]SLOResult, 0, len(order))
	for _, k := range order {
		rs := byKey[k]
		slices.SortStableFunc(rs, func(a, b *result.Record) int { return cmp.Compare(a.Spec.RateRPS, b.Spec.RateRPS) })
		res := SLOResult{Conn: k.conn, RPC: k.rpc, Inflight: k.inflight}
		for _, r := range rs {
			ok, why := s.Sustained(r)
			if !ok {
				res.Missed, res.MissedWhy = r.Spec.RateRPS, why
				break
			}
			res.MaxRate = r.Spec.RateRPS
		}
		out = append(out, res)
	}
	return out
}
