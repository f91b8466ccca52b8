// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

func bulkRec(transport string, size int64, chunk int, mbps, cliCPU, srvCPU, alloc float64) result.BulkRecord {
	return result.BulkRecord{
		Kind: result.KindBulk, Status: result.StatusOK,
		Spec:                result.BulkSpec{Transport: transport, SizeBytes: size, ChunkBytes: chunk, Streams: 1},
		ThroughputBytesPerS: mbps * 1e6, ClientCPUSPerGiB: cliCPU, ServerCPUSPerGiB: srvCPU,
		ServerAllocBytesPerMiB: alloc, ClientPeakRSSBytes: 64 << 20, ServerPeakRSSBytes: -1,
	}
}

func TestBulkTableRatiosToTCP(t *testing.T) {
	recs := []result.BulkRecord{
		bulkRec("grpc", 1<<30, 64<<10, 500, 1.0, 1.0, 2000),
		bulkRec("tcp", 1<<30, 64<<10, 2000, 0.25, 0.25, 10),
		bulkRec("grpc", 1<<30, 1<<20, 800, 0.5, 0.5, 300), // no tcp step at this chunk
		overTLS(bulkRec("grpc", 1<<30, 64<<10, 400, 1.0, 1.0, 2000)),
		overTLS(bulkRec("tcp", 1<<30, 64<<10, 1000, 0.5, 0.5, 10)), // the reference of steps over TLS only
	}
	var b bytes.Buffer
	if err := BulkTable(&b, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("got %d lines, want a header and 5 rows:\n%s", len(lines), b.String())
	}
	tests := []struct {
		row  int
		want []string // fields in order: transport, size, chunk, streams, MB/s, x tcp, ..., CPU x tcp
	}{
		{1, []string{"grpc", "1GiB", "64KiB", "1", "500", "0.25", "1.000", "1.000", "4.00", "2000"}},
		{2, []string{"tcp", "1GiB", "64KiB", "1", "2000", "1.00", "0.250", "0.250", "1.00", "10"}},
		{3, []string{"grpc", "1GiB", "1MiB", "1", "800", "-", "0.500", "0.500", "-", "300"}},
		{4, []string{"grpc+tls", "1GiB", "64KiB", "1", "400", "0.40", "1.000", "1.000", "2.00", "2000"}},
		{5, []string{"tcp+tls", "1GiB", "64KiB", "1", "1000", "1.00", "0.500", "0.500", "1.00", "10"}},
	}
	for _, tc := range tests {
		got := strings.Fields(lines[tc.row])
		for i, w := range tc.want {
			if i >= len(got) || got[i] != w {
				t.Errorf("row %d field %d: got %q, want %q (row %q)", tc.row, i, got, w, lines[tc.row])
				break
			}
		}
	}
}

func TestBulkSectionCharts(t *testing.T) {
	var recs []result.BulkRecord
	for _, size := range []int64{16 << 20, 1 << 30} {
		for _, chunk := range []int{16 << 10, 64 << 10} {
			recs = append(recs, bulkRec("grpc", size, chunk, 400, 1, 1, 2000), bulkRec("grpc-tuned", size, chunk, 1500, 0.4, 0.3, 300),
				bulkRec("tcp", size, chunk, 3000, 0.2, 0.2, 0))
		}
	}
	failed := bulkRec("grpc", 1<<30, 1<<20, 0, 0, 0, 0)
	failed.Status = result.StatusFailed
	recs = append(recs, failed)
	figs := BulkSection{Records: recs}.Charts()
	kinds := map[string]int{}
	for _, f := range figs {
		kinds[f.Kind]++
		for _, s := range f.Series {
			if len(s.Points) != 2 {
				t.Errorf("%s %q: got %d points, want 2", f.Title, s.Label, len(s.Points))
			}
		}
		if f.Kind == "bulk-alloc" && len(f.Series) != 2 {
			t.Errorf("%s: got %d series, want grpc and grpc-tuned (tcp allocates nothing, which a log axis cannot show)", f.Title, len(f.Series))
		}
	}
	want := map[string]int{"bulk-throughput": 2, "bulk-cpu": 2, "bulk-alloc": 2}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("got %d %s figures, want %d", kinds[k], k, n)
		}
	}
	if _, err := figs[0].SVG(); err != nil {
		t.Errorf("SVG: %v", err)
	}
}

// overTLS marks r as run over TLS.
func overTLS(r result.BulkRecord) result.BulkRecord {
	r.Spec.TLS = true
	return r
}
