// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec

import (
	"bytes"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// FuzzUnmarshal: any bytes, cut anywhere, either fail or give exactly what
// protobuf reads as the data field of a one-field message, never a panic.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte{0x0a, 3, 1, 2, 3}, uint8(1))
	f.Add([]byte{0x0a, 0x80, 0x01}, uint8(2))
	f.Add([]byte{0x12, 0}, uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		var data mem.BufferSlice
		if c := int(cut); c > 0 && c < len(b) {
			data = split(b, c)
		} else {
			data = split(b)
		}
		var m Message
		err := theCodec().Unmarshal(data, &m)
		data.Free()
		if err != nil {
			return
		}
		got := m.Data.Materialize()
		m.Free()
		var want wrapperspb.BytesValue
		if perr := proto.Unmarshal(b, &want); perr != nil {
			t.Fatalf("bulkcodec read %x, protobuf refused it: %v", b, perr)
		}
		if !bytes.Equal(got, want.GetValue()) {
			t.Fatalf("got %x, protobuf reads %x", got, want.GetValue())
		}
	})
}
