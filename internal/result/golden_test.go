// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// golden are the committed records of testdata/results, one file per kind
// of record and per way a ping record is made, each with what its records
// must be: a check that fails when a file holds something else.
var golden = map[string]func(*Set) error{
	"go-sweep.jsonl": func(s *Set) error { return pings(s, "closed", func(r *Record) bool { return r.Spec.Server == "go" }) },
	"go-open.jsonl": func(s *Set) error {
		return pings(s, "open", func(r *Record) bool { return r.Spec.RateRPS > 0 && r.ScheduleLag != nil })
	},
	"go-auto.jsonl": func(s *Set) error {
		return pings(s, "closed", func(r *Record) bool { return r.Spec.ConnMode == "pool-auto" && r.Spec.ConnsMin > 0 })
	},
	"go-workers.jsonl": func(s *Set) error {
		return pings(s, "closed", func(r *Record) bool { return len(r.Workers) > 0 })
	},
	"go-bulk.jsonl": func(s *Set) error {
		if len(s.Ping)+len(s.Flow) > 0 || len(s.Bulk) == 0 {
			return fmt.Errorf("got %d ping, %d bulk, %d flow records, want bulk only", len(s.Ping), len(s.Bulk), len(s.Flow))
		}
		var ts []string
		for _, b := range s.Bulk {
			ts = append(ts, b.Spec.Transport)
		}
		for _, want := range []string{BulkTCP, BulkGRPC} {
			if !slices.Contains(ts, want) {
				return fmt.Errorf("transports %v lack %s", ts, want)
			}
		}
		return nil
	},
	"go-flow.jsonl": func(s *Set) error {
		if len(s.Ping)+len(s.Bulk) > 0 || len(s.Flow) == 0 {
			return fmt.Errorf("got %d ping, %d bulk, %d flow records, want flow only", len(s.Ping), len(s.Bulk), len(s.Flow))
		}
		for _, f := range s.Flow {
			if len(f.RPCNS) == 0 {
				return fmt.Errorf("flow cell %s at %d ns RTT has no RPC times", f.Transport, f.RTTNS)
			}
		}
		return nil
	},
	"imported.jsonl": func(s *Set) error {
		if len(s.Ping) == 0 || len(s.Bulk) == 0 || len(s.Flow) == 0 {
			return fmt.Errorf("got %d ping, %d bulk, %d flow records, want every kind", len(s.Ping), len(s.Bulk), len(s.Flow))
		}
		for _, r := range s.Ping {
			if r.Source == "" {
				return fmt.Errorf("imported ping record without a source: %+v", r.Spec)
			}
		}
		for _, b := range s.Bulk {
			if b.Source == "" {
				return fmt.Errorf("imported bulk record without a source: %+v", b.Spec)
			}
		}
		for _, f := range s.Flow {
			if f.Source == "" {
				return fmt.Errorf("imported flow record without a source: %s", f.Transport)
			}
		}
		return nil
	},
	// rpclab doctor --pid on a Go sweep at in-flight 8 on one connection to
	// a server allowing one stream: one window, kept whole.
	"go-live.jsonl": func(s *Set) error {
		if len(s.Ping)+len(s.Bulk)+len(s.Flow) > 0 || len(s.Live) != 1 {
			return fmt.Errorf("got %d ping, %d bulk, %d flow, %d live records, want one live record", len(s.Ping), len(s.Bulk), len(s.Flow), len(s.Live))
		}
		if l := s.Live[0]; l.Status != StatusOK || l.Process.Stack != "grpc-go" {
			return fmt.Errorf("got a live record of status %q and stack %q, want ok and grpc-go", l.Status, l.Process.Stack)
		}
		return nil
	},
}

// pings checks that s holds ping records only, of the load model given,
// each as ok as want says.
func pings(s *Set, model string, want func(*Record) bool) error {
	if len(s.Bulk)+len(s.Flow) > 0 || len(s.Ping) == 0 {
		return fmt.Errorf("got %d ping, %d bulk, %d flow records, want ping only", len(s.Ping), len(s.Bulk), len(s.Flow))
	}
	for i := range s.Ping {
		r := &s.Ping[i]
		if r.Spec.LoadModel != model || r.Status != StatusOK || r.Requests == 0 || !want(r) {
			return fmt.Errorf("record %d (%s, in-flight %d, load model %q, status %s) is not what this file holds",
				i+1, r.Spec.ConnLabel(), r.Spec.Inflight, r.Spec.LoadModel, r.Status)
		}
	}
	return nil
}

// TestGoldenRecordsOfEveryKind reads every file of testdata/results, which
// every language's records are compared with: each validates against its
// kind's schema and holds the records its name says; every file has its
// check, and together they hold every kind of record.
func TestGoldenRecordsOfEveryKind(t *testing.T) {
	files, err := filepath.Glob("../../testdata/results/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	seen := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		check, ok := golden[name]
		if !ok {
			t.Errorf("%s has no check in golden", f)
			continue
		}
		seen[name] = true
		set, err := ReadAllFile(t.Context(), f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := check(set); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		kinds[KindPing] = kinds[KindPing] || len(set.Ping) > 0
		kinds[KindBulk] = kinds[KindBulk] || len(set.Bulk) > 0
		kinds[KindFlow] = kinds[KindFlow] || len(set.Flow) > 0
		kinds[KindLive] = kinds[KindLive] || len(set.Live) > 0
	}
	for name := range golden {
		if !seen[name] {
			t.Errorf("testdata/results/%s is missing", name)
		}
	}
	for _, k := range Kinds {
		if !kinds[k] {
			t.Errorf("no golden %s records in testdata/results", k)
		}
	}
}
