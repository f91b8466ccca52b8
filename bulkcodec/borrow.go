// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec

import (
	"sync"

	"google.golang.org/grpc/mem"
)

// Borrow returns b as a mem.Buffer for a Message, without copying it and,
// once warm, without allocating: for bytes that outlive the transfer and
// never change while it runs (a file in memory, a page cache, a fixed
// pattern). Free the Message after SendMsg as usual; b itself is never
// returned to any pool.
//
// mem.SliceBuffer(b) is the same bytes, but storing it in the mem.Buffer
// interface allocates its slice header on the heap, once per message: one
// of the four allocations per 64 KiB message of rpclab's grpc-tuned server
// (BenchmarkTunedDownload in package server). Borrow instead wraps b in a
// reference-counted mem.Buffer, whose objects grpc-go pools, over a slice
// header that comes back to Borrow's own pool when the transport frees the
// buffer after writing it. A b of grpc-go's pooling threshold (1 KiB) or
// less is a mem.SliceBuffer, as mem.NewBuffer would make it.
func Borrow(b []byte) mem.Buffer {
	b = b[:len(b):len(b)] // nothing may grow into what follows b; and cap is what NewBuffer checks
	if mem.IsBelowBufferPoolingThreshold(len(b)) {
		return mem.SliceBuffer(b)
	}
	h := borrowed.Get(len(b))
	*h = b
	return mem.NewBuffer(h, &borrowed)
}

// headerPool recycles slice headers, not bytes: Put forgets the slice.
type headerPool struct{ free sync.Pool }

var borrowed headerPool

var _ mem.BufferPool = (*headerPool)(nil)

// Get returns an empty slice header; the length is ignored.
func (p *headerPool) Get(int) *[]byte {
	if h, ok := p.free.Get().(*[]byte); ok {
		return h
	}
	return new([]byte)
}

// Put takes back a header grpc-go has freed.
func (p *headerPool) Put(h *[]byte) {
	*h = nil
	p.free.Put(h)
}
