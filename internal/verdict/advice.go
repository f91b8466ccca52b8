// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import "github.com/rpclab/rpclab/internal/result"

// Advise is the one rule for advice, used by the sweep verdict and by
// rpclab doctor alike: among the candidate layouts' records (each measured
// at the point being compared), it returns the best (highest throughput)
// and the advised one: the fewest connections reaching EnoughOfBest of the
// best throughput, ties broken by the lower client CPU per RPC.
//
// Why fewest connections first: every connection costs the server memory
// and a file descriptor, and beyond the client's usable CPUs more of them
// add no parallelism and split RPCs into smaller write batches (see
// pool.DefaultSize); within EnoughOfBest of the best, the difference in
// throughput is inside a single step's run-to-run noise, while the
// connection count is a cost the user pays on every server. CPU per RPC
// only separates layouts with the same count (a pool and per-worker of the
// same size), where it is the one remaining difference.
//
// An adaptive pool (spec.conn_mode "pool-auto", which sizes itself) is
// advised over every fixed layout only when its record at least matches
// the fixed layouts: throughput reaching EnoughOfBest of the best fixed
// layout's, and client CPU per RPC at most AutoCPUSlack times the advised
// fixed layout's (when both know it). It then follows a load that moves,
// which no fixed size does; short of that, a fixed size is advised. best
// is the highest throughput of all, the adaptive pool's included.
//
// Records that did not succeed are ignored; both results are nil when no
// candidate succeeded.
func Advise(cands []*result.Record) (best, advised *result.Record) {
	var bestFixed, auto *result.Record
	for _, r := range cands {
		if r == nil || !clean(r) {
			continue
		}
		if best == nil || r.ThroughputRPS > best.ThroughputRPS {
			best = r
		}
		switch {
		case r.Spec.ConnMode == AutoPoolMode:
			if auto == nil || r.ThroughputRPS > auto.ThroughputRPS {
				auto = r
			}
		case bestFixed == nil || r.ThroughputRPS > bestFixed.ThroughputRPS:
			bestFixed = r
		}
	}
	if bestFixed == nil {
		return best, auto
	}
	for _, r := range cands {
		if r == nil || !clean(r) || r.Spec.ConnMode == AutoPoolMode || r.ThroughputRPS < EnoughOfBest*bestFixed.ThroughputRPS {
			continue
		}
		if advised == nil || fewer(r, advised) {
			advised = r
		}
	}
	if auto != nil && matches(auto, bestFixed, advised) {
		advised = auto
	}
	return best, advised
}

// AutoPoolMode is the spec.conn_mode of an adaptive pool (--conn pool:auto).
const AutoPoolMode = "pool-auto"

// AutoCPUSlack is how much more client CPU per RPC than the advised fixed
// layout an adaptive pool may use and still be advised: the bar for
// matching the best fixed layout (throughput within 0.9 of it, CPU
// per RPC within 1.1x).
const AutoCPUSlack = 1.1

// matches says whether the adaptive pool's record auto at least matches
// the fixed layouts: bestFixed's throughput (within EnoughOfBest) and
// advised's CPU per RPC (within AutoCPUSlack).
func matches(auto, bestFixed, advised *result.Record) bool {
	if auto.ThroughputRPS < EnoughOfBest*bestFixed.ThroughputRPS {
		return false
	}
	return auto.ClientCPUNSPerRPC <= 0 || advised.ClientCPUNSPerRPC <= 0 ||
		auto.ClientCPUNSPerRPC <= AutoCPUSlack*advised.ClientCPUNSPerRPC
}

// fewer says whether a is advised over b: fewer connections, then lower
// client CPU per RPC (when both know it).
func fewer(a, b *result.Record) bool {
	if ca, cb := Conns(a), Conns(b); ca != cb {
		return ca < cb
	}
	return a.ClientCPUNSPerRPC > 0 && b.ClientCPUNSPerRPC > 0 && a.ClientCPUNSPerRPC < b.ClientCPUNSPerRPC
}

// Conns is the number of connections r's layout used, as every verdict
// counts them: those the operating system saw during the interval
// (conns_observed), or those requested when the count could not be read.
func Conns(r *result.Record) int {
	if r.ConnsObserved > 0 {
		return r.ConnsObserved
	}
	return r.Spec.ConnsRequested
}
