// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/usage"
)

// With this variable set the test binary is an rpclab bulk server, so the
// tests run the server as a separate process, as rpclab does.
const asServer = "RPCLAB_BULK_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(asServer) == "1" {
		os.Exit(testserver.Child())
	}
	os.Exit(m.Run())
}

// startServer runs the test binary as a bulk server in a child process.
func startServer(ctx context.Context, t *testing.T) *server.Process {
	t.Helper()
	t.Setenv(asServer, "1")
	p, err := server.StartProcess(ctx, []string{os.Args[0]}, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if strings.Contains(p.Stderr(), "DATA RACE") {
			t.Errorf("the server reported a data race:\n%s", p.Stderr())
		}
	})
	return p
}

func TestEveryTransportMoves64MiBIntact(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	p := startServer(ctx, t)
	spec := &bulk.Spec{Target: p.Addr, Transports: bulk.Transports, Sizes: []int64{64 << 20},
		Chunks: []int{64 << 10}, Warmup: 0}
	var got []result.BulkRecord
	var jsonl bytes.Buffer
	var events []string
	prog := func(e bulk.Event) {
		events = append(events, fmt.Sprintf("%d %d/%d %s %v", e.Kind, e.I, e.N, e.Step.Transport, e.Record != nil))
	}
	err := bulk.Run(ctx, spec, bulk.Options{Progress: prog}, func(r *result.BulkRecord) error {
		got = append(got, *r)
		return result.NewWriter(&jsonl).Write(r)
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(got) != len(bulk.Transports) {
		t.Fatalf("got %d records, want %d", len(got), len(bulk.Transports))
	}
	var want []string
	for i, tr := range bulk.Transports {
		n := len(bulk.Transports)
		want = append(want, fmt.Sprintf("%d %d/%d %s false", bulk.StepStarted, i, n, tr), fmt.Sprintf("%d %d/%d %s true", bulk.StepEnded, i, n, tr))
	}
	if !slices.Equal(events, want) {
		t.Errorf("progress: got %q, want %q", events, want)
	}
	for i, r := range got {
		if r.Spec.Transport != bulk.Transports[i] || r.Status != result.StatusOK || r.Requests != 1 || r.Bytes != 64<<20 {
			t.Errorf("got %s: status %s, %d requests, %d bytes (%s); want ok, 1 request, %d bytes",
				r.Spec.Transport, r.Status, r.Requests, r.Bytes, r.Error, 64<<20)
		}
		if r.ServerCPUNS < 0 || r.ServerAllocBytes < 0 || r.ThroughputBytesPerS <= 0 {
			t.Errorf("%s: got server CPU %d ns, server allocs %d B, %f B/s; want all measured",
				r.Spec.Transport, r.ServerCPUNS, r.ServerAllocBytes, r.ThroughputBytesPerS)
		}
	}
	back, err := result.ReadAll(ctx, &jsonl)
	if err != nil || len(back.Bulk) != len(got) {
		t.Errorf("ReadAll: got %d records, %v; want %d records that match the schema", len(back.Bulk), err, len(got))
	}
}

// wchar is how many bytes process pid has written with system calls.
func wchar(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

func TestServerKilledMidTransfer(t *testing.T) {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skip("needs /proc/PID/io to see the transfer under way")
	}
	for _, tr := range bulk.Transports {
		t.Run(tr, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testutil.LongContext(t))
			defer cancel()
			p := startServer(ctx, t)
			killed := make(chan struct{})
			go func() {
				defer close(killed)
				for wchar(p.Pid) < 8<<20 { // the download is under way
					select {
					case <-ctx.Done():
						return
					case <-time.After(time.Millisecond):
					}
				}
				p.Kill()
			}()
			spec := &bulk.Spec{Target: p.Addr, Transports: []string{tr}, Sizes: []int64{1 << 40 / 1024},
				Chunks: []int{64 << 10}, MinDuration: testutil.LongTimeout, Warmup: 0}
			var recs []result.BulkRecord
			err := bulk.Run(ctx, spec, bulk.Options{}, func(r *result.BulkRecord) error {
				recs = append(recs, *r)
				return nil
			})
			<-killed
			t.Logf("Run: %v", err)
			if err == nil || !strings.Contains(err.Error(), tr) {
				t.Errorf("got error %v, want one naming transport %s", err, tr)
			}
			if len(recs) != 1 {
				t.Fatalf("got %d records, want 1", len(recs))
			}
			r := recs[0]
			if r.Status != result.StatusFailed || r.Bytes <= 0 || r.Bytes >= spec.Sizes[0] || !strings.Contains(r.Error, "after ") {
				t.Errorf("got status %s, %d bytes, error %q; want failed, a partial byte count, an error saying after how many bytes",
					r.Status, r.Bytes, r.Error)
			}
			if r.ServerCPUNS != -1 {
				t.Errorf("got server CPU %d ns from a dead server, want -1", r.ServerCPUNS)
			}
			var b bytes.Buffer
			if err := result.NewWriter(&b).Write(&r); err != nil {
				t.Fatal(err)
			}
			if err := result.Validate(bytes.TrimSpace(b.Bytes())); err != nil {
				t.Errorf("the failed record does not match the schema: %v", err)
			}
		})
	}
}

func TestSpecValidate(t *testing.T) {
	base := func() bulk.Spec {
		return bulk.Spec{Target: "127.0.0.1:1", Transports: []string{bulk.GRPC, bulk.TCP}, Sizes: []int64{1 << 20}, Chunks: []int{64 << 10}}
	}
	tests := []struct {
		name   string
		modify func(*bulk.Spec)
		want   []string // substrings of the error; nil: valid
	}{
		{"defaults", func(*bulk.Spec) {}, nil},
		{"size zero", func(s *bulk.Spec) { s.Sizes = []int64{0} }, []string{"--size 0"}},
		{"unknown transport", func(s *bulk.Spec) { s.Transports = []string{"carrier-pigeon"} }, []string{`"carrier-pigeon"`, "grpc-tuned"}},
		{"chunk above the gRPC max message", func(s *bulk.Spec) { s.Chunks = []int{8 << 20} },
			[]string{"--chunk 8MiB", "8388613-byte", "4194304 bytes (4MiB)", "--max-message-size"}},
		{"chunk at the gRPC max message", func(s *bulk.Spec) { s.Chunks = []int{4 << 20} }, []string{"--chunk 4MiB", "4194309-byte"}},
		{"limit raised explicitly", func(s *bulk.Spec) { s.Chunks = []int{8 << 20}; s.MaxMessage = 9 << 20 }, nil},
		{"big chunk without gRPC", func(s *bulk.Spec) { s.Chunks = []int{8 << 20}; s.Transports = []string{bulk.TCP, bulk.Sidechannel} }, nil},
		{"chunk above the server's", func(s *bulk.Spec) { s.Chunks = []int{32 << 20}; s.Transports = []string{bulk.TCP} }, []string{"--chunk 32MiB", "16MiB"}},
		{"zero streams", func(s *bulk.Spec) { s.Streams = []int{0} }, []string{"--streams 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.modify(&s)
			err := s.Validate()
			if tc.want == nil {
				if err != nil {
					t.Errorf("got %v, want no error", err)
				}
				return
			}
			var ue *usage.Error
			if !errors.As(err, &ue) {
				t.Fatalf("got %v, want a *usage.Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// A cancelled context stops ExpectedCRC at once, whatever the size; the
// size that once spun for hours is refused by Validate.
func TestExpectedCRCStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := bulk.ExpectedCRC(ctx, bulk.MaxSize); !errors.Is(err, context.Canceled) {
		t.Errorf("ExpectedCRC(cancelled, MaxSize) = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := bulk.ExpectedCRC(ctx, bulk.MaxSize-1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ExpectedCRC(50ms, MaxSize-1) = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancelled ExpectedCRC took %v, want well under 2s", d)
	}
	// A small size agrees with the stream.
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	size := int64(bulk.MaxChunk + 12345)
	got, err := bulk.ExpectedCRC(ctx, size)
	want := crc32.Update(crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), bulk.Stream(0, bulk.MaxChunk)),
		crc32.MakeTable(crc32.Castagnoli), bulk.Stream(bulk.MaxChunk, 12345))
	if err != nil || got != want {
		t.Errorf("ExpectedCRC(%d) = %08x, %v; want %08x", size, got, err, want)
	}
}

func TestValidateRefusesSizesAboveMaxSize(t *testing.T) {
	for _, tc := range []struct {
		size, warmup int64
		ok           bool
	}{
		{bulk.MaxSize, -1, true},
		{bulk.MaxSize + 1, -1, false},
		{1 << 20, bulk.MaxSize, true},
		{1 << 20, bulk.MaxSize + 1, false},
	} {
		s := bulk.Spec{Target: "127.0.0.1:1", Transports: []string{"tcp"}, Sizes: []int64{tc.size}, Chunks: []int{1 << 16}, Warmup: tc.warmup}
		err := s.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("Validate(size %d, warm-up %d) = %v, want ok=%v", tc.size, tc.warmup, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "64GiB") {
			t.Errorf("Validate(size %d, warm-up %d) = %q, want it to name the limit 64GiB", tc.size, tc.warmup, err)
		}
	}
}
