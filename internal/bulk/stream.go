// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package bulk measures what moving bytes costs over gRPC against the
// alternatives: a server-side download of a deterministic byte stream (as a
// Git fetch is) over grpc-go with its defaults, grpc-go tuned for bulk data,
// raw TCP, HTTP/1.1, h2c and a sidechannel beside a gRPC call. Every transfer
// is checked for length and CRC-32C, so a transport cannot win by losing
// bytes. The package holds the client (the transports, the download loop, the
// CPU, allocation and RSS sampling of both processes) and the wire formats it
// shares with the server side in package server. docs/bulk.md describes it.
package bulk

import (
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sync"
)

// MaxChunk is the largest chunk (message, write) size the bulk services
// accept.
const MaxChunk = 16 << 20

// period is the length of the repeating pattern of the deterministic stream.
// It is odd, so chunk boundaries fall at a different place in the pattern on
// every lap, and a chunk that is sent twice or out of order changes the
// checksum.
const period = 1<<20 - 3

// castagnoli is the CRC-32C table (hardware accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// streamBuf holds the pattern followed by MaxChunk more bytes of it, so any
// chunk of the stream is one slice of it: nothing is generated or copied to
// send it, as a server sending a file from the page cache.
var streamBuf = sync.OnceValue(func() []byte {
	r := rand.New(rand.NewPCG(0x7270636c6162, 7)) // "rpclab"
	b := make([]byte, period+MaxChunk)
	for i := 0; i < period; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < period; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := period; i < len(b); i += period {
		copy(b[i:], b[:period])
	}
	return b
})

// Stream returns bytes [off, off+n) of the deterministic stream, n at most
// MaxChunk. The slice is shared and must not be written.
func Stream(off int64, n int) []byte {
	if n > MaxChunk {
		panic("bulk: Stream chunk above MaxChunk")
	}
	start := int(off % period)
	return streamBuf()[start : start+n : start+n]
}

// MaxSize is the largest download a bulk request may ask for: 64 GiB. At
// the few GiB/s a loopback transport moves, that is tens of seconds per
// request, longer than any step needs; a larger size is a typo (the
// 9999999GiB of a mistyped flag), and the client must compute the expected
// CRC-32C of the whole size before the interval (ExpectedCRC: 64 GiB took
// 75 s on one core of the 2-core lab machine while it was shared). The server refuses sizes above its own limit
// (server.WithMaxBulkSize, default MaxSize) in the same way.
const MaxSize int64 = 64 << 30

var expected sync.Map // size -> uint32

// ExpectedCRC returns the CRC-32C of the first size bytes of the stream. It
// stops with ctx's error when ctx ends (it checks between chunks of
// MaxChunk bytes, a few milliseconds apart).
func ExpectedCRC(ctx context.Context, size int64) (uint32, error) {
	if v, ok := expected.Load(size); ok {
		return v.(uint32), nil
	}
	var crc uint32
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("bulk: the expected CRC-32C of %d bytes, stopped after %d: %w", size, off, err)
		}
		n := int(min(int64(MaxChunk), size-off))
		crc = crc32.Update(crc, castagnoli, Stream(off, n))
		off += int64(n)
	}
	expected.Store(size, crc)
	return crc, nil
}

// verifier checks one transfer: its length and its running CRC-32C.
type verifier struct {
	n   int64
	crc uint32
}

func (v *verifier) write(p []byte) {
	v.crc = crc32.Update(v.crc, castagnoli, p)
	v.n += int64(len(p))
}

// Write is write as an io.Writer (bulkcodec.Message.WriteTo's); it never
// fails.
func (v *verifier) Write(p []byte) (int, error) {
	v.write(p)
	return len(p), nil
}
