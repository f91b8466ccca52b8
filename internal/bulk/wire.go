// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// TCPRequestLen is the size of a raw TCP download request: the magic
// "RLB1", the size (uint64) and the chunk (uint32), big-endian. The server
// answers with exactly size bytes of the stream, written chunk bytes at a
// time, and then waits for the next request on the same connection.
const TCPRequestLen = 16

var tcpMagic = [4]byte{'R', 'L', 'B', '1'}

// EncodeTCPRequest writes a raw TCP download request into b.
func EncodeTCPRequest(b *[TCPRequestLen]byte, size int64, chunk int) {
	copy(b[:4], tcpMagic[:])
	binary.BigEndian.PutUint64(b[4:12], uint64(size))
	binary.BigEndian.PutUint32(b[12:16], uint32(chunk))
}

// ReadTCPRequest reads and checks one raw TCP download request. It returns
// io.EOF when the peer closed the connection between requests.
func ReadTCPRequest(r io.Reader) (size int64, chunk int, err error) {
	var b [TCPRequestLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, err
	}
	if [4]byte(b[:4]) != tcpMagic {
		return 0, 0, errors.New("bulk: not a bulk TCP request (bad magic)")
	}
	size = int64(binary.BigEndian.Uint64(b[4:12]))
	chunk = int(binary.BigEndian.Uint32(b[12:16]))
	if err := CheckSizes(size, chunk); err != nil {
		return 0, 0, err
	}
	return size, chunk, nil
}

// CheckSizes checks a requested size and chunk against what the servers
// accept.
func CheckSizes(size int64, chunk int) error {
	if size <= 0 {
		return fmt.Errorf("bulk: size %d must be positive", size)
	}
	if chunk <= 0 || chunk > MaxChunk {
		return fmt.Errorf("bulk: chunk %d is outside 1..%d", chunk, MaxChunk)
	}
	return nil
}

// RefusalMagic starts what the raw bulk listener (tcp) writes
// instead of the stream when it refuses a connection or a request: the
// magic, then a message of at most MaxRefusalLen bytes; then it closes the
// connection. The stream never starts with 'R' (its first byte is 0x8b),
// so a client tells a refusal from a response by the response's first
// byte.
const (
	RefusalMagic  = "RLBX"
	MaxRefusalLen = 512
)

// EncodeRefusal returns the refusal carrying msg (cut to MaxRefusalLen).
func EncodeRefusal(msg string) []byte {
	if len(msg) > MaxRefusalLen {
		msg = msg[:MaxRefusalLen]
	}
	return append([]byte(RefusalMagic), msg...)
}

// ErrRefused is wrapped by the error of a download the server refused on
// a raw transport; the error carries the server's message.
var ErrRefused = errors.New("bulk: the server refused")

// refusal returns the server's refusal if first, the first bytes of a
// response, start one (nil if they are the stream's): it reads the rest of
// the message from r.
func refusal(first []byte, r io.Reader) error {
	if len(first) == 0 || first[0] != RefusalMagic[0] {
		return nil
	}
	rest, _ := io.ReadAll(io.LimitReader(r, int64(len(RefusalMagic)+MaxRefusalLen)))
	msg, ok := strings.CutPrefix(string(first)+string(rest), RefusalMagic)
	if !ok {
		return fmt.Errorf("bulk: the response starts %q, neither the stream nor a refusal", first)
	}
	return fmt.Errorf("%w: %s", ErrRefused, msg)
}
