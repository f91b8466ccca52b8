// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package bulkcodec carries bytes through gRPC without copying them: an
// encoding.CodecV2 whose Message holds its payload as grpc-go mem buffers,
// so a server-streaming download moves each chunk from a pooled buffer to
// the socket, and from the transport's pooled read buffers to the reader,
// without a new []byte per message.
//
// On the wire a Message is the protobuf message
//
//	message Chunk { bytes data = 1; }
//
// so a peer with that message (rpclab.v1.Chunk is one) and grpc-go's own
// codec reads and writes it; only the Go objects differ. Every other
// message goes through grpc-go's protobuf codec, so requests and replies of
// the same service need nothing special.
//
// Use it by importing this package on both sides (it registers the codec
// as Name) and calling with grpc.CallContentSubtype(Name), which
// DialOptions includes. Send a Message whose Data you own, and Free it
// after SendMsg (the codec takes its own reference until the transport has
// written the bytes); receive into a Message, use Data, then Free it and
// reuse the Message.
//
// What it saves, and what stays: grpc-go's protobuf codec allocates and
// copies each message's payload once on each side; this codec does not, so
// the bytes allocated per MiB moved stay a small constant whatever the
// transfer's size (TestAllocsFlat: about 8.4 KB per MiB at 128 MiB in
// 64 KiB messages, both sides, against 1.06 MB with the protobuf codec).
// What remains is grpc-go's per message, about 11 allocations and 530
// bytes for both sides; a heap profile of BenchmarkOptions puts them in
// the transport: the client's readDataFrame, recvBuffer.put and
// Stream.read, the server's http2Server.write and msgHeader, the BDP
// estimator's ping frames and the window updates on both sides, and one
// here (the BufferSlice Marshal returns, which grpc-go does not give
// back). A codec cannot remove those. A sender whose bytes outlive the
// transfer (a file in memory) lends them through Borrow, which saves the
// allocation a mem.SliceBuffer costs in the mem.Buffer interface.
package bulkcodec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// Name is the codec's content-subtype ("application/grpc+bulkcodec").
const Name = "bulkcodec"

// ErrMalformed is wrapped by Unmarshal's error for bytes that are not a
// Chunk with one data field.
var ErrMalformed = errors.New("bulkcodec: malformed message")

// Message is a message of bytes. Data's buffers belong to whoever filled
// the Message: the sender frees them after SendMsg, the receiver after use
// (Free).
type Message struct {
	Data mem.BufferSlice
}

// Len is the number of payload bytes.
func (m *Message) Len() int { return m.Data.Len() }

// Free releases Data's buffers and empties Data, keeping its capacity for
// the next message.
func (m *Message) Free() {
	m.Data.Free()
	clear(m.Data)
	m.Data = m.Data[:0]
}

// WriteTo writes the payload to w, then frees it.
func (m *Message) WriteTo(w io.Writer) (int64, error) {
	defer m.Free()
	var n int64
	for _, b := range m.Data {
		k, err := w.Write(b.ReadOnlyData())
		n += int64(k)
		if err != nil {
			return n, fmt.Errorf("bulkcodec: write: %w", err)
		}
	}
	return n, nil
}

// Fill fills m with up to n bytes read from r into one buffer from
// grpc-go's default pool, freeing what m held. It returns io.EOF when r
// has nothing left, and the bytes read otherwise.
func (m *Message) Fill(r io.Reader, n int) (int, error) {
	m.Free()
	pool := mem.DefaultBufferPool()
	buf := pool.Get(n)
	k, err := io.ReadFull(r, *buf)
	if k == 0 {
		pool.Put(buf)
		if err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		return 0, err
	}
	*buf = (*buf)[:k]
	m.Data = append(m.Data, mem.NewBuffer(buf, pool))
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil // the short last chunk
	}
	return k, err
}

// codec is the CodecV2; other messages go to grpc-go's protobuf codec.
type codec struct {
	proto encoding.CodecV2
	hdr   atomic.Pointer[header] // the last length's field header
}

type header struct {
	n   int
	buf mem.Buffer
}

var _ encoding.CodecV2 = (*codec)(nil)

func init() {
	encoding.RegisterCodecV2(&codec{proto: encoding.GetCodecV2(proto.Name)})
}

func (*codec) Name() string { return Name }

// tag is field 1, wire type 2 (length-delimited).
const tag = 1<<3 | 2

// Marshal hands the payload's buffers to the transport behind a cached
// field header: no copy, and no allocation but the returned slice.
func (c *codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*Message)
	if !ok {
		return c.proto.Marshal(v)
	}
	n := m.Data.Len()
	if n == 0 {
		return nil, nil // the empty message
	}
	out := make(mem.BufferSlice, 0, 1+len(m.Data))
	out = append(out, c.header(n))
	for _, b := range m.Data {
		b.Ref() // the transport frees it once written
		out = append(out, b)
	}
	return out, nil
}

// header returns the tag and length of a payload of n bytes; a download
// repeats one length, so it is built once per length change. The buffer
// is a SliceBuffer: freeing it does nothing, so sharing it is safe.
func (c *codec) header(n int) mem.Buffer {
	if h := c.hdr.Load(); h != nil && h.n == n {
		return h.buf
	}
	b := make([]byte, 1, 1+binary.MaxVarintLen64)
	b[0] = tag
	h := &header{n: n, buf: mem.SliceBuffer(binary.AppendUvarint(b, uint64(n)))}
	c.hdr.Store(h)
	return h.buf
}

// Unmarshal parses the field header and keeps references to the
// transport's buffers that hold the payload, without copying.
func (c *codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*Message)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	m.Free()
	if data.Len() == 0 {
		return nil
	}
	h, length, err := parseHeader(data)
	if err != nil {
		return err
	}
	if rest := data.Len() - h; uint64(rest) != length {
		return fmt.Errorf("%w: length %d, %d bytes follow", ErrMalformed, length, rest)
	}
	for _, b := range data {
		switch l := b.Len(); {
		case h >= l:
			h -= l
		case h > 0:
			_, right := mem.SplitUnsafe(b, h) // b keeps the header, freed by gRPC
			m.Data = append(m.Data, right)
			h = 0
		default:
			b.Ref()
			m.Data = append(m.Data, b)
		}
	}
	return nil
}

// parseHeader reads the tag and the varint length, which may span buffers,
// and returns the header's size.
func parseHeader(data mem.BufferSlice) (size int, length uint64, err error) {
	var hdr [1 + binary.MaxVarintLen64]byte
	h := 0
	for _, b := range data {
		for _, x := range b.ReadOnlyData() {
			hdr[h] = x
			h++
			if h == 1 && x != tag {
				return 0, 0, fmt.Errorf("%w: tag %#x, want %#x", ErrMalformed, x, tag)
			}
			if h >= 2 && x < 0x80 {
				length, k := binary.Uvarint(hdr[1:h])
				if k <= 0 {
					return 0, 0, fmt.Errorf("%w: bad length", ErrMalformed)
				}
				return h, length, nil
			}
			if h == len(hdr) {
				return 0, 0, fmt.Errorf("%w: length too long", ErrMalformed)
			}
		}
	}
	return 0, 0, fmt.Errorf("%w: truncated header", ErrMalformed)
}
