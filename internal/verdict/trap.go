// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"fmt"

	"github.com/rpclab/rpclab/internal/result"
)

// Trapped says whether r's layout asked for more connections than the
// operating system saw during its interval (YDB's trap). A record whose
// count could not be read (conns_observed 0 or less) is not trapped: there
// is nothing to compare.
func Trapped(r *result.Record) bool {
	return r.ConnsObserved > 0 && r.ConnsObserved < wanted(r)
}

// wanted is the fewest connections r's layout means to have open: those it
// asked for, or for an adaptive pool ("pool-auto", which opens between
// conns_min and conns_requested as the load asks) its min.
func wanted(r *result.Record) int {
	if r.Spec.ConnMode == AutoPoolMode {
		return r.Spec.ConnsMin
	}
	return r.Spec.ConnsRequested
}

// TrapWhy names the cause of a trapped layout and its fix.
func TrapWhy(r *result.Record) string {
	if r.Spec.ConnMode == "channel-per-worker" {
		return "channels with identical arguments share one subchannel, and so one TCP connection, in C-core stacks (C++, Python) and grpc-js; " +
			"fix: give each channel distinct arguments (--conn local-pool or distinct-args), or use a pool of connections (" + PoolLibrary(r.Env.Language) + ")."
	}
	return "fewer connections were open than the layout meant to use (lazy dialling, or connections shared below the channel)."
}

// PoolLibrary names rpclab's connection pool for the stack of a client
// language: package pool in Go, clients/<lang>/pool elsewhere.
func PoolLibrary(lang string) string {
	switch lang {
	case "", "go":
		return "github.com/rpclab/rpclab/pool"
	case "cpp":
		return "rpclab::ChannelPool, clients/cpp/pool"
	case "java":
		return "io.rpclab.pool.ChannelPool, clients/java/pool"
	case "rust":
		return "the rpclab-pool crate, clients/rust/pool"
	case "python":
		return "rpclab_pool.ChannelPool, clients/python/pool"
	case "node":
		return "ChannelPool of @rpclab/grpc-pool, clients/node/pool"
	}
	return "clients/" + lang + "/pool"
}

// ConnNotes explains layouts whose connections the operating system saw
// fewer of than the layout asked for. One note per client and layout, at
// the highest in-flight count where it showed.
func ConnNotes(recs []result.Record) []string {
	type key struct{ lang, conn string }
	worst := map[key]*result.Record{}
	var order []key
	for i := range recs {
		r := &recs[i]
		if r.Status != result.StatusOK || r.ConnsObserved < 0 || r.ConnsObserved >= wanted(r) {
			continue
		}
		k := key{r.Env.Language, ConnLabel(r)}
		if w, ok := worst[k]; !ok || r.Spec.Inflight > w.Spec.Inflight {
			if !ok {
				order = append(order, k)
			}
			worst[k] = r
		}
	}
	var out []string
	for _, k := range order {
		r := worst[k]
		out = append(out, fmt.Sprintf("%s %s at in-flight %d asked for %d connections and the OS saw %d: %s", k.lang, k.conn,
			r.Spec.Inflight, r.Spec.ConnsRequested, r.ConnsObserved, TrapWhy(r)))
	}
	return out
}
