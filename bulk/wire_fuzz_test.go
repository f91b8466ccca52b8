// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"bytes"
	"testing"

	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"

	"github.com/rpclab/rpclab/proto/bulkpb"
)

// FuzzReadTCPRequest: the raw TCP listener's request parser (16 bytes
// from anyone who connects) never panics and reads no more than one
// request; what it accepts passes CheckSizes and encodes back to the same
// bytes. Run: go test -run '^$' -fuzz FuzzReadTCPRequest -fuzztime 20s ./bulk
func FuzzReadTCPRequest(f *testing.F) {
	for _, r := range []struct {
		size  int64
		chunk int
	}{{1 << 20, 64 << 10}, {1, 1}, {1 << 62, MaxChunk}, {-1, 1}, {1, MaxChunk + 1}, {0, 0}} {
		var b [TCPRequestLen]byte
		EncodeTCPRequest(&b, r.size, r.chunk)
		f.Add(b[:])
	}
	f.Add([]byte("GET /bulk HTTP/1.1\r\n\r\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		size, chunk, err := ReadTCPRequest(r)
		if read := len(in) - r.Len(); read > TCPRequestLen {
			t.Fatalf("read %d bytes, more than one request", read)
		}
		if err != nil {
			return
		}
		if err := CheckSizes(size, chunk); err != nil {
			t.Fatalf("accepted size %d chunk %d: %v", size, chunk, err)
		}
		var b [TCPRequestLen]byte
		EncodeTCPRequest(&b, size, chunk)
		if !bytes.Equal(b[:], in[:TCPRequestLen]) {
			t.Fatalf("accepted %x as size %d chunk %d, which encodes as %x", in[:TCPRequestLen], size, chunk, b)
		}
	})
}

// FuzzRawCodecUnmarshal: the zero-copy codec reads what a peer sends as a
// Chunk, frame by frame; it never panics, and what it accepts protobuf
// reads as the same Chunk (it may refuse what protobuf would take, such
// as other fields). Run: go test -run '^$' -fuzz FuzzRawCodecUnmarshal -fuzztime 20s ./bulk
func FuzzRawCodecUnmarshal(f *testing.F) {
	for _, n := range []int{0, 1, 127, 128, 300} {
		b, err := proto.Marshal(&bulkpb.Chunk{Data: bytes.Repeat([]byte{'x'}, n)})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(1))
		f.Add(b, uint8(7))
	}
	f.Add([]byte{chunkTag, 0x80}, uint8(1))
	f.Add([]byte{2<<3 | 2, 1, 'x'}, uint8(2))
	f.Add([]byte{chunkTag, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, uint8(3))
	c := encoding.GetCodecV2(CodecName)
	f.Fuzz(func(t *testing.T, in []byte, frame uint8) {
		var got []byte
		ic := &InChunk{Sink: func(p []byte) { got = append(got, p...) }}
		if err := c.Unmarshal(split(in, int(frame)+1), ic); err != nil {
			return
		}
		if ic.N != len(got) {
			t.Fatalf("N = %d, but %d bytes went to the sink", ic.N, len(got))
		}
		var want bulkpb.Chunk
		if err := proto.Unmarshal(in, &want); err != nil {
			t.Fatalf("accepted %x, which protobuf refuses: %v", in, err)
		}
		if !bytes.Equal(got, want.GetData()) {
			t.Fatalf("accepted %x as %d bytes; protobuf reads %d", in, len(got), len(want.GetData()))
		}
	})
}
