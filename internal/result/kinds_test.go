// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func bulkSample() *BulkRecord {
	return &BulkRecord{
		SchemaVersion: SchemaVersion, Kind: KindBulk, Status: StatusOK,
		StartedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		Spec:      BulkSpec{Target: "127.0.0.1:1", Transport: "tcp", SizeBytes: 1 << 20, ChunkBytes: 64 << 10, Streams: 1, RequestsPerStream: 1, MaxMessageBytes: 4 << 20},
		Env:       sample(1).Env,
		Requests:  1, Bytes: 1 << 20, Checksum: "crc32c", DurationNS: 1e6, ThroughputBytesPerS: 1e9,
		ClientPeakRSSBytes: -1, ServerPeakRSSBytes: -1, ServerCPUNS: -1, ServerCPUSPerGiB: -1,
	}
}

func flowSample() *FlowRecord {
	return &FlowRecord{
		SchemaVersion: SchemaVersion, Kind: KindFlow, Status: StatusTruncated,
		StartedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		Transport: "h2c", PayloadBytes: 1e6, RTTNS: 64e6, RPCsRequested: 20, RPCNS: []int64{5e8, 4e8},
		FirstNS: 5e8, SteadyNS: 4e8, SteadyFrom: 2, BudgetNS: 1e9, Env: sample(1).Env,
	}
}

// TestWriteReadAllEveryKind: one Writer writes every kind and ReadAll
// returns each kind in its slice, kinds in order of first appearance.
func TestWriteReadAllEveryKind(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, r := range []Kinded{flowSample(), sample(1), bulkSample(), sample(2), flowSample()} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	set, err := ReadAll(t.Context(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Ping) != 2 || len(set.Bulk) != 1 || len(set.Flow) != 2 || set.Len() != 5 {
		t.Errorf("got %d ping, %d bulk, %d flow (len %d), want 2, 1, 2 (5)", len(set.Ping), len(set.Bulk), len(set.Flow), set.Len())
	}
	if got, want := set.Kinds(), []string{KindFlow, KindPing, KindBulk}; !slices.Equal(got, want) {
		t.Errorf("got kinds %q, want %q", got, want)
	}
	if set.Flow[0].Status != StatusTruncated || set.Bulk[0].Spec.Transport != "tcp" || set.Ping[1].Spec.Inflight != 2 {
		t.Errorf("records not read back: %+v", set)
	}
}

func TestReadAllBadInput(t *testing.T) {
	line := func(r Kinded) string { return string(encodeAny(t, r)) }
	ping, bulk, flow := line(sample(1)), line(bulkSample()), line(flowSample())
	tests := []struct {
		name      string
		in        string
		wantRecs  int
		wantErr   string
		sentinel  error
		truncated bool
	}{
		{name: "empty", in: "", wantErr: "no records", sentinel: ErrNoRecords},
		{name: "blank", in: "\n \n", wantErr: "no records", sentinel: ErrNoRecords},
		{name: "mixed kinds", in: ping + bulk + "\n" + flow, wantRecs: 3},
		{name: "bad JSON mid-file", in: bulk + "{nope\n" + flow, wantRecs: 1, wantErr: "line 2: not a JSON object"},
		{name: "unknown kind", in: flow + strings.Replace(bulk, `"kind":"bulk"`, `"kind":"ydb"`, 1), wantRecs: 1, wantErr: `line 2: unknown record kind "ydb"`, sentinel: ErrUnknownKind},
		{name: "no kind", in: strings.Replace(flow, `"kind":"flow",`, "", 1), wantErr: `line 1: unknown record kind: no "kind" key`, sentinel: ErrUnknownKind},
		{name: "unknown schema version", in: ping + strings.Replace(flow, `"schema_version":1`, `"schema_version":2`, 1), wantRecs: 1, wantErr: "line 2: schema_version 2 is not supported"},
		{name: "truncated last line", in: flow + bulk[:60], wantRecs: 1, wantErr: "line 2", sentinel: ErrTruncated, truncated: true},
		{name: "bulk schema violation", in: strings.Replace(bulk, `"transport":"tcp"`, `"transport":"pigeon"`, 1), wantErr: "schema/bulk.schema.json"},
		{name: "exponent the validator cannot expand", in: strings.Replace(bulk, `"bytes":1048576`, `"bytes":0.372E506666666667`, 1), wantErr: "line 1: number \"0.372E506666666667\" is out of range"},
		{name: "huge exponent in an unknown key", in: strings.Replace(flow, `{"schema_version":1`, `{"x":1e-9999999,"schema_version":1`, 1), wantErr: "out of range"},
		{name: "flow schema violation", in: strings.Replace(flow, `"transport":"h2c"`, `"transport":"pigeon"`, 1), wantErr: "schema/flow.schema.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := ReadAll(t.Context(), strings.NewReader(tc.in))
			if set.Len() != tc.wantRecs {
				t.Errorf("got %d records, want %d", set.Len(), tc.wantRecs)
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
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("got %v, want it to wrap %v", err, tc.sentinel)
			}
			if got := errors.Is(err, ErrTruncated); got != tc.truncated {
				t.Errorf("errors.Is(err, ErrTruncated) = %v, want %v", got, tc.truncated)
			}
		})
	}
}

// TestReadIsPingOnly: Read, for callers that want ping records, names the
// line of a record of another kind.
func TestReadIsPingOnly(t *testing.T) {
	in := string(encodeAny(t, sample(1))) + string(encodeAny(t, bulkSample()))
	recs, err := Read(strings.NewReader(in))
	if len(recs) != 1 || err == nil || !strings.Contains(err.Error(), `line 2: a "bulk" record where "ping" records are expected`) {
		t.Errorf("got %d records, %v; want 1 and an error naming line 2", len(recs), err)
	}
}

func TestValidateRejectsBadRecords(t *testing.T) {
	tests := []struct {
		name, kind, rec, want string
	}{
		{"ping record as bulk", KindBulk, `{"schema_version":1,"kind":"ping"}`, "kind"},
		{"unknown transport", KindBulk, `{"schema_version":1,"kind":"bulk","spec":{"transport":"pigeon"}}`, "transport"},
		{"host_cpu without its CPUs", KindPing, strings.Replace(string(encodeAny(t, sample(1))), `"cpus":[0],`, "", 1), "cpus"},
		{"host_cpu busy below zero", KindPing, strings.Replace(string(encodeAny(t, sample(1))), `"busy_ns":2000000000`, `"busy_ns":-1`, 1), "busy_ns"},
		{"not JSON", KindBulk, `{"schema_version":`, "not JSON"},
		{"unknown kind", "ydb", `{"schema_version":1,"kind":"ydb"}`, "unknown record kind"},
		{"flow without rpc_ns", KindFlow, strings.Replace(string(encodeAny(t, flowSample())), `"rpc_ns":[500000000,400000000],`, "", 1), "rpc_ns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateKind(tc.kind, []byte(tc.rec))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
	for _, r := range []Kinded{sample(1), bulkSample(), flowSample()} {
		if err := Validate(bytes.TrimSpace(encodeAny(t, r))); err != nil {
			t.Errorf("a complete %s record: %v", r.recordKind(), err)
		}
	}
}

// zeros is an endless stream of one byte, as /dev/zero is of zeros.
type zeros byte

func (z zeros) Read(p []byte) (int, error) {
	block := bytes.Repeat([]byte{byte(z)}, 64<<10)
	n := 0
	for n < len(p) {
		n += copy(p[n:], block)
	}
	return n, nil
}

// TestReadAllBoundsALine: a line past MaxLineBytes is an error naming it,
// after the records before it, not a read until memory runs out.
func TestReadAllBoundsALine(t *testing.T) {
	good := encodeAny(t, flowSample())
	set, err := ReadAll(t.Context(), io.MultiReader(bytes.NewReader(good), io.LimitReader(zeros(0), MaxLineBytes+1)))
	if set.Len() != 1 || !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "line 2: line longer than 64 MiB") {
		t.Errorf("got %d records, %v; want 1 and line 2 longer than 64 MiB", set.Len(), err)
	}
	// A line of exactly the maximum is read (and is not a record).
	_, err = ReadAll(t.Context(), io.LimitReader(zeros(' '), MaxLineBytes))
	if !errors.Is(err, ErrNoRecords) {
		t.Errorf("a blank line of %d bytes: got %v, want no records", MaxLineBytes, err)
	}
}

// TestReadAllStopsWhenCancelled: reading a stream that never ends (blank
// lines forever, so no line is too long) stops when ctx is done.
func TestReadAllStopsWhenCancelled(t *testing.T) {
	for _, endless := range []io.Reader{zeros('\n'), zeros(' ')} {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		done := make(chan error, 1)
		go func() {
			_, err := ReadAll(ctx, endless)
			done <- err
		}()
		timer := time.NewTimer(10 * time.Second)
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("got %v, want the context's error", err)
			}
		case <-timer.C:
			t.Fatal("ReadAll still reading 10s after its context ended")
		}
		timer.Stop()
		cancel()
	}
}

func encodeAny(t testing.TB, recs ...Kinded) []byte {
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
