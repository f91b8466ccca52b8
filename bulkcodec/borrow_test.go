// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec

import (
	"bytes"
	"testing"
)

// TestBorrow: a borrowed buffer holds exactly b, and once freed (as the
// transport frees it after writing) the next costs no allocation, where a
// mem.SliceBuffer in the mem.Buffer interface costs one; 1 KiB or less is
// grpc-go's unpooled SliceBuffer, one allocation.
func TestBorrow(t *testing.T) {
	src := make([]byte, 2<<20)
	for i := range src {
		src[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name   string
		b      []byte
		allocs float64
	}{
		{"64KiB", src[3 : 3+64<<10], 0},
		{"1MiB", src[1<<20:], 0},
		{"1KiB, unpooled", src[5 : 5+1<<10], 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Borrow(tc.b)
			if got := b.ReadOnlyData(); !bytes.Equal(got, tc.b) || cap(got) != len(tc.b) {
				t.Fatalf("got %d bytes (cap %d), want b's %d (cap %d)", len(got), cap(got), len(tc.b), len(tc.b))
			}
			b.Free()
			if raceEnabled {
				return
			}
			got := testing.AllocsPerRun(100, func() { Borrow(tc.b).Free() })
			if got != tc.allocs {
				t.Errorf("got %v allocations per buffer, want %v", got, tc.allocs)
			}
		})
	}
}
