// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

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

func TestRawCodecIsWireCompatibleWithProtobuf(t *testing.T) {
	c := encoding.GetCodecV2(CodecName)
	for _, n := range []int{1, 127, 128, 16 << 10, 64<<10 + 3, 1 << 20} {
		data := Stream(12345, n)
		out, err := c.Marshal(&OutChunk{Data: data})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := proto.Marshal(&bulkpb.Chunk{Data: data})
		if got := out.Materialize(); !bytes.Equal(got, want) {
			t.Fatalf("chunk of %d: raw codec wrote %d bytes that differ from protobuf's %d", n, len(got), len(want))
		}
		for _, piece := range []int{1, 7, 16 << 10} {
			var got bytes.Buffer
			in := InChunk{Sink: func(p []byte) { got.Write(p) }}
			if err := c.Unmarshal(split(want, piece), &in); err != nil {
				t.Fatalf("chunk of %d in pieces of %d: %v", n, piece, err)
			}
			if in.N != n || !bytes.Equal(got.Bytes(), data) {
				t.Errorf("chunk of %d in pieces of %d: got %d bytes (N=%d), want the %d sent", n, piece, got.Len(), in.N, n)
			}
		}
		var pm bulkpb.Chunk // other messages go through protobuf
		if err := c.Unmarshal(split(want, 5), &pm); err != nil || !bytes.Equal(pm.Data, data) {
			t.Errorf("protobuf through the raw codec: got %d bytes, %v; want %d", len(pm.Data), err, n)
		}
	}
}

func TestRawCodecRejectsMalformedChunks(t *testing.T) {
	c := encoding.GetCodecV2(CodecName)
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"wrong field", []byte{2<<3 | 2, 1, 'x'}, "tag"},
		{"short", []byte{chunkTag, 5, 'x'}, "length 5, 1 bytes follow"},
		{"long", []byte{chunkTag, 1, 'x', 'y'}, "length 1, 2 bytes follow"},
		{"truncated varint", []byte{chunkTag, 0x80}, "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Unmarshal(split(tc.in, 1), &InChunk{Sink: func([]byte) {}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
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
