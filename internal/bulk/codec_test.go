// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"bytes"
	"context"
	"hash/crc32"
	"strings"
	"testing"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/rpclab/rpclab/bulkcodec"
	"github.com/rpclab/rpclab/proto/bulkpb"
)

// split cuts b into buffers of at most n bytes, as the HTTP/2 transport
// hands a message over frame by frame.
func split(b []byte, n int) mem.BufferSlice {
	var s mem.BufferSlice
	for len(b) > 0 {
		k := min(n, len(b))
		s = append(s, mem.SliceBuffer(b[:k]))
		b = b[k:]
	}
	return s
}

// TestTunedCodecIsWireCompatibleWithChunk: what grpc-tuned's server sends
// (a bulkcodec.Message of the stream's bytes) is the protobuf encoding of
// rpclab.v1.Chunk, so grpc's client reads it, and the other way round.
// bulkcodec's own tests check malformed input and cut buffers.
func TestTunedCodecIsWireCompatibleWithChunk(t *testing.T) {
	c := encoding.GetCodecV2(bulkcodec.Name)
	for _, n := range []int{1, 127, 128, 16 << 10, 64<<10 + 3, 1 << 20} {
		data := Stream(12345, n)
		out, err := c.Marshal(&bulkcodec.Message{Data: mem.BufferSlice{mem.SliceBuffer(data)}})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := proto.Marshal(&bulkpb.Chunk{Data: data})
		if got := out.Materialize(); !bytes.Equal(got, want) {
			t.Fatalf("chunk of %d: the tuned codec wrote %d bytes that differ from protobuf's %d", n, len(got), len(want))
		}
		for _, piece := range []int{1, 7, 16 << 10} {
			var in bulkcodec.Message
			var v verifier
			if err := c.Unmarshal(split(want, piece), &in); err != nil {
				t.Fatalf("chunk of %d in pieces of %d: %v", n, piece, err)
			}
			if _, err := in.WriteTo(&v); err != nil || v.n != int64(n) || v.crc != crc32.Checksum(data, castagnoli) {
				t.Errorf("chunk of %d in pieces of %d: got %d bytes (%v), want the %d sent", n, piece, v.n, err, n)
			}
		}
	}
}

// corrupt serves the stream with one byte flipped, or one byte short.
type corrupt struct{ flip, short bool }

func (c corrupt) download(_ context.Context, size int64, chunk int, v *verifier) error {
	for off := int64(0); off < size; off += int64(chunk) {
		p := bytes.Clone(Stream(off, int(min(int64(chunk), size-off))))
		if c.flip && off == 0 {
			p[len(p)/2] ^= 1
		}
		if c.short && off+int64(len(p)) == size {
			p = p[:len(p)-1]
		}
		v.write(p)
	}
	return nil
}

func (corrupt) close() error { return nil }

func TestFetchCatchesLostAndChangedBytes(t *testing.T) {
	tests := []struct {
		name string
		d    corrupt
		want string // "" for no error
	}{
		{"intact", corrupt{}, ""},
		{"one bit flipped", corrupt{flip: true}, "CRC-32C"},
		{"one byte lost", corrupt{short: true}, "got 1048575 bytes, want 1048576"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v verifier
			err := fetch(context.Background(), tc.d, 1<<20, 4096, &v)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
