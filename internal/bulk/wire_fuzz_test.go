// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"bytes"
	"testing"
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
