// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rpclab/rpclab/internal/testutil"
)

func theCodec() encoding.CodecV2 { return encoding.GetCodecV2(Name) }

// split cuts b into buffers at the given offsets, as a transport's reads
// would.
func split(b []byte, cuts ...int) mem.BufferSlice {
	var out mem.BufferSlice
	prev := 0
	for _, c := range append(cuts, len(b)) {
		out = append(out, mem.Copy(b[prev:c], mem.DefaultBufferPool()))
		prev = c
	}
	return out
}

// TestWire: a Message is a protobuf message with one bytes field 1 both
// ways (BytesValue is one), whichever way the transport cuts it.
func TestWire(t *testing.T) {
	c := theCodec()
	for _, tc := range []struct {
		name string
		size int
		cuts []int
	}{
		{"empty", 0, nil},
		{"one byte", 1, nil},
		{"header split", 300, []int{1}},
		{"header whole, payload split", 70000, []int{4, 5, 40000}},
		{"header spans three", 200, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload := bytes.Repeat([]byte{0xab, 0xcd, 0x01}, tc.size/3+1)[:tc.size]
			want, err := proto.Marshal(wrapperspb.Bytes(payload))
			if err != nil {
				t.Fatal(err)
			}
			m := Message{Data: mem.BufferSlice{mem.SliceBuffer(payload)}}
			out, err := c.Marshal(&m)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Materialize(); !bytes.Equal(got, want) {
				t.Fatalf("Marshal: got %x, want %x", got, want)
			}
			out.Free()
			data := split(want, cutsWithin(tc.cuts, len(want))...)
			var in Message
			if err := c.Unmarshal(data, &in); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			data.Free() // as grpc-go does: in must hold its own references
			if got := in.Data.Materialize(); !bytes.Equal(got, payload) {
				t.Errorf("Unmarshal: got %d bytes, want %d", len(got), len(payload))
			}
			in.Free()
		})
	}
}

func cutsWithin(cuts []int, n int) []int {
	var out []int
	for _, c := range cuts {
		if c > 0 && c < n {
			out = append(out, c)
		}
	}
	return out
}

func TestMalformed(t *testing.T) {
	c := theCodec()
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"wrong tag", []byte{0x12, 1, 0}},
		{"truncated header", []byte{0x0a}},
		{"short payload", []byte{0x0a, 5, 1, 2}},
		{"long payload", []byte{0x0a, 1, 1, 2}},
		{"varint too long", append([]byte{0x0a}, bytes.Repeat([]byte{0xff}, 11)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Message
			if err := c.Unmarshal(split(tc.b), &m); !errors.Is(err, ErrMalformed) {
				t.Errorf("got %v, want %v", err, ErrMalformed)
			}
		})
	}
}

// TestOtherMessages: messages other than Message go through protobuf.
func TestOtherMessages(t *testing.T) {
	c := theCodec()
	b, err := c.Marshal(wrapperspb.Int64(42))
	if err != nil {
		t.Fatal(err)
	}
	var got wrapperspb.Int64Value
	if err := c.Unmarshal(b, &got); err != nil || got.GetValue() != 42 {
		t.Errorf("got %v, %v, want 42", got.GetValue(), err)
	}
}

// TestDownload: a streamed download arrives whole with either codec, and
// this codec's peer reads grpc-go's protobuf messages' bytes unchanged.
func TestDownload(t *testing.T) {
	addr := startServer(t, ServerOptions()...)
	cc := dial(t, addr, DialOptions()...)
	for _, tc := range []struct {
		raw  bool
		size int64
	}{{true, 0}, {true, 1}, {true, 5<<20 + 7}, {false, 5<<20 + 7}} {
		t.Run(fmt.Sprintf("raw=%v/size=%d", tc.raw, tc.size), func(t *testing.T) {
			want := &patternReader{}
			var got int64
			var bad bool
			buf := make([]byte, chunkSize)
			err := fetch(testutil.Context(t), cc, tc.size, tc.raw, func(p []byte) {
				_, _ = want.Read(buf[:len(p)])
				bad = bad || !bytes.Equal(p, buf[:len(p)])
				got += int64(len(p))
			})
			if err != nil || got != tc.size || bad {
				t.Errorf("got %d bytes (corrupt %v), %v, want %d", got, bad, err, tc.size)
			}
		})
	}
}

// allocPerMiB downloads size bytes and returns the bytes this process
// allocated (server and client together) per MiB moved.
func allocPerMiB(t *testing.T, cc func() error, size int64) float64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := cc(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(size>>20)
}

// TestAllocsFlat: with this codec the bytes a download allocates per MiB
// do not grow from 16 MiB to 128 MiB and stay under 1/16 of the payload
// (no payload is copied: what remains is grpc-go's bookkeeping per message
// and a fixed cost per call); grpc-go's protobuf codec, measured the same way, allocates
// at least a MiB per MiB (each payload copied once on each side), which
// shows the measurement sees a copy. It counts the whole process, server
// and client, so it bounds each side's.
func TestAllocsFlat(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("moves 288 MiB; under -race sync.Pool drops buffers on purpose")
	}
	// Fixed windows: with grpc-go's BDP estimator the window grows with
	// the run's timing, and with it the pooled buffers in flight, which the
	// pool allocates once (a cost of the window, not of the transfer).
	const window = 1 << 20
	addr := startServer(t, grpc.InitialWindowSize(window), grpc.InitialConnWindowSize(window))
	cc := dial(t, addr, grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(window))
	ctx := testutil.Context(t)
	sink := func([]byte) {}
	// No GC while measuring: a collection empties the buffer pools, and
	// refilling them would be counted against whichever transfer it hit.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	per := func(size int64, raw bool) float64 {
		_ = fetch(ctx, cc, 1<<20, raw, sink) // warm the pools
		var runs [3]float64
		for i := range runs {
			runs[i] = allocPerMiB(t, func() error { return fetch(ctx, cc, size, raw, sink) }, size)
		}
		slices.Sort(runs[:])
		return runs[1] // the median
	}
	small, large := per(16<<20, true), per(128<<20, true)
	proto := per(16<<20, false)
	t.Logf("bytes allocated per MiB: bulkcodec %.0f at 16 MiB, %.0f at 128 MiB; protobuf %.0f at 16 MiB", small, large, proto)
	// Per MiB it must not grow with the transfer (a fixed cost per call
	// makes it fall).
	if large > 1.25*small {
		t.Errorf("per MiB at 128 MiB: got %.0f, want at most 1.25x the %.0f of 16 MiB", large, small)
	}
	if limit := float64(1<<20) / 16; large > limit {
		t.Errorf("per MiB at 128 MiB: got %.0f, want under %.0f (no payload copy)", large, limit)
	}
	if proto < 1<<20 {
		t.Errorf("protobuf codec per MiB: got %.0f, want at least %d (the control must see its copies)", proto, 1<<20)
	}
}
