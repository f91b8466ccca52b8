// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/stats"
)

func sample(inflight int) *Record {
	return &Record{
		SchemaVersion: SchemaVersion,
		Kind:          "ping",
		Status:        StatusOK,
		StartedAt:     time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC),
		Spec: Spec{Target: "127.0.0.1:50051", RPC: "unary", ConnMode: "shared", ConnsRequested: 1,
			Inflight: inflight, WarmupNS: 1e9, IntervalNS: 3e9, LoadModel: "closed"},
		Env: Env{Language: "go", GRPCImpl: "grpc-go", GRPCVersion: "1.85.0", RuntimeVersion: "go1.26",
			HostCPUs: 2, Hostname: "h", OS: "linux"},
		Requests:      1000,
		Errors:        map[string]int64{"Unavailable": 3},
		DurationNS:    3e9,
		ThroughputRPS: 332.3,
		Latency:       stats.Latency{MinNS: 10, MeanNS: 20.5, P50NS: 20, P90NS: 30, P99NS: 40, P999NS: 50, P100NS: 60},
		HistogramHDR:  "HISTFAAAACt42pJpmSzMwMDAwgABzFCakYGBQdyj7AWD/QeIwMF1jCKAAAAA//9jWgW/", // 10 RPCs of 1 ms,
		ConnsObserved: 1,
		ClientCPUNS:   5e8,
		HostCPU: &HostCPU{
			Client: CPUTimes{CPUs: []int{0}, BusyNS: 2e9, IdleNS: 9e8, StealNS: 1e8},
			Server: &CPUTimes{CPUs: []int{1}, BusyNS: 1e9, IdleNS: 2e9},
			Host:   CPUTimes{CPUs: []int{0, 1}, BusyNS: 3e9, IdleNS: 2.9e9, StealNS: 1e8},
		},
	}
}

func encode(t *testing.T, recs ...*Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestWriteReadRoundTrip(t *testing.T) {
	data := encode(t, sample(1), sample(4))
	recs, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Spec.Inflight != 4 || recs[0].Errors["Unavailable"] != 3 {
		t.Fatalf("got %+v", recs)
	}
	if !recs[0].StartedAt.Equal(sample(1).StartedAt) {
		t.Errorf("started_at = %v, want %v (nanoseconds kept)", recs[0].StartedAt, sample(1).StartedAt)
	}
}

func TestReadBadInput(t *testing.T) {
	good := string(encode(t, sample(1)))
	wrongVersion := strings.Replace(good, `"schema_version":1`, `"schema_version":7`, 1)
	badSchema := strings.Replace(good, `"rpc":"unary"`, `"rpc":"carrier-pigeon"`, 1)
	tests := []struct {
		name      string
		in        string
		wantRecs  int
		wantErr   string
		truncated bool
	}{
		{name: "empty", in: "", wantRecs: 0},
		{name: "blank lines", in: "\n" + good + "\n\n", wantRecs: 1},
		{name: "truncated last line", in: good + good[:40], wantRecs: 1, wantErr: "line 2", truncated: true},
		{name: "garbage middle line", in: good + "{nope\n" + good, wantRecs: 1, wantErr: "line 2: not a JSON object"},
		{name: "unknown schema version", in: wrongVersion, wantErr: "schema_version 7 is not supported"},
		{name: "not a record", in: `{"hello":"world"}` + "\n", wantErr: "no schema_version"},
		{name: "schema violation", in: badSchema, wantErr: "does not match the result schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Read(strings.NewReader(tc.in))
			if len(recs) != tc.wantRecs {
				t.Errorf("got %d records, want %d", len(recs), tc.wantRecs)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("got error %v, want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got error %v, want one containing %q", err, tc.wantErr)
			}
			if got := errors.Is(err, ErrTruncated); got != tc.truncated {
				t.Errorf("errors.Is(err, ErrTruncated) = %v, want %v", got, tc.truncated)
			}
		})
	}
}

func TestValidateRequiredFields(t *testing.T) {
	full, _ := json.Marshal(sample(1))
	if err := Validate(full); err != nil {
		t.Fatalf("a complete record fails validation: %v", err)
	}
	for _, field := range []string{"spec", "env", "histogram_hdr", "client_cpu_ns", "conns_observed"} {
		var m map[string]any
		_ = json.Unmarshal(full, &m)
		delete(m, field)
		b, _ := json.Marshal(m)
		if err := Validate(b); err == nil {
			t.Errorf("record without %q validates, want an error", field)
		}
	}
}

// TestGoldenRecordsValidate checks the fixture records every client's
// conformance test compares with.
func TestGoldenRecordsValidate(t *testing.T) {
	recs, err := ReadFile("../../testdata/results/go-sweep.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("no records in the fixture")
	}
}

// committedFiles are the records committed in the repository, of every kind.
func committedFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"../../testdata/results/*.jsonl", "../../docs/img/*.jsonl", "testdata/*.jsonl"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

// TestCommittedRecordsValidate: every record committed with the docs and
// the testdata, of every kind, still matches its kind's schema, and every
// kind has committed records.
func TestCommittedRecordsValidate(t *testing.T) {
	seen := map[string]int{}
	for _, f := range committedFiles(t) {
		set, err := ReadAllFile(t.Context(), f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		seen[KindPing] += len(set.Ping)
		seen[KindBulk] += len(set.Bulk)
		seen[KindFlow] += len(set.Flow)
		seen[KindLive] += len(set.Live)
	}
	for _, k := range Kinds {
		if seen[k] == 0 {
			t.Errorf("no committed %s records, want some", k)
		}
	}
}
