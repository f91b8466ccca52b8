// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// CodecName is the content-subtype of the zero-copy codec that grpc-tuned
// uses ("application/grpc+bulkraw"). The bytes on the wire are exactly the
// protobuf encoding of rpclab.v1.Chunk, so any protobuf peer can read them;
// only the Go objects on either side differ.
const CodecName = "bulkraw"

// OutChunk is a Chunk to send without a copy: the codec writes the field's
// tag and length into a small pooled buffer and hands Data itself to gRPC's
// transport, which writes it to the socket. Data must not change until the
// process ends (the deterministic stream never does).
type OutChunk struct{ Data []byte }

// InChunk receives a Chunk without materialising it: the codec parses the
// field header and passes the payload, still in the transport's pooled
// buffers, to Sink, then gRPC returns the buffers to the pool.
type InChunk struct {
	// Sink is called with consecutive pieces of the chunk's data.
	Sink func([]byte)
	// N is the length of the last chunk received.
	N int
}

// rawCodec is the zero-copy codec; other messages (the request, the
// sidechannel result) go through grpc-go's protobuf codec.
type rawCodec struct{ proto encoding.CodecV2 }

var _ encoding.CodecV2 = rawCodec{}

func init() {
	encoding.RegisterCodecV2(rawCodec{proto: encoding.GetCodecV2(proto.Name)})
}

func (rawCodec) Name() string { return CodecName }

// chunkTag is field 1 (data), wire type 2 (length-delimited).
const chunkTag = 1<<3 | 2

func (c rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	oc, ok := v.(*OutChunk)
	if !ok {
		return c.proto.Marshal(v)
	}
	if len(oc.Data) == 0 {
		return nil, nil // the empty message
	}
	return mem.BufferSlice{chunkHeader(len(oc.Data)), mem.SliceBuffer(oc.Data)}, nil
}

// headers caches the field header of each chunk length, boxed as a
// mem.Buffer once: a download repeats one length, so a header costs nothing
// after the first message.
var headers sync.Map // int -> mem.Buffer

func chunkHeader(n int) mem.Buffer {
	if b, ok := headers.Load(n); ok {
		return b.(mem.Buffer)
	}
	h := make([]byte, 1, 1+binary.MaxVarintLen64)
	h[0] = chunkTag
	h = binary.AppendUvarint(h, uint64(n))
	b, _ := headers.LoadOrStore(n, mem.Buffer(mem.SliceBuffer(h)))
	return b.(mem.Buffer)
}

var errBadChunk = errors.New("bulk: malformed rpclab.v1.Chunk")

func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	ic, ok := v.(*InChunk)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	ic.N = 0
	total := data.Len()
	if total == 0 {
		return nil
	}
	// The header (tag and varint length) is at most 11 bytes and may span
	// buffers; read it byte by byte.
	var hdr [1 + binary.MaxVarintLen64]byte
	h, bi, off := 0, 0, 0
	var length uint64
	for {
		for bi < len(data) && off == data[bi].Len() {
			bi, off = bi+1, 0
		}
		if bi == len(data) || h == len(hdr) {
			return errBadChunk
		}
		hdr[h] = data[bi].ReadOnlyData()[off]
		h, off = h+1, off+1
		if h >= 2 && hdr[h-1] < 0x80 {
			if hdr[0] != chunkTag {
				return fmt.Errorf("%w: tag %#x", errBadChunk, hdr[0])
			}
			var n int
			length, n = binary.Uvarint(hdr[1:h])
			if n <= 0 {
				return errBadChunk
			}
			break
		}
	}
	if uint64(total-h) != length {
		return fmt.Errorf("%w: length %d, %d bytes follow", errBadChunk, length, total-h)
	}
	for ; bi < len(data); bi, off = bi+1, 0 {
		if p := data[bi].ReadOnlyData()[off:]; len(p) > 0 {
			ic.Sink(p)
		}
	}
	ic.N = int(length)
	return nil
}
