// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import "github.com/rpclab/rpclab/result"

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
// Records that did not succeed are ignored; both results are nil when no
// candidate succeeded.
func Advise(cands []*result.Record) (best, advised *result.Record) {
	for _, r := range cands {
		if r == nil || !clean(r) {
			continue
		}
		if best == nil || r.ThroughputRPS > best.ThroughputRPS {
			best = r
		}
	}
	if best == nil {
		return nil, nil
	}
	for _, r := range cands {
		if r == nil || !clean(r) || r.ThroughputRPS < EnoughOfBest*best.ThroughputRPS {
			continue
		}
		if advised == nil || fewer(r, advised) {
			advised = r
		}
	}
	return best, advised
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
