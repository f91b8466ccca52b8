// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzHello feeds any first bytes to the server's hello parser: it never
// panics, calls a connection a sidechannel exactly when it starts with the
// magic, replays every byte it read of any other, and reads the id that
// follows the magic.
func FuzzHello(f *testing.F) {
	f.Add([]byte(Magic + "0123456789abcdef"))
	f.Add([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	f.Add([]byte{0x16, 0x03, 0x01, 0x02, 0x00})
	f.Add([]byte(Magic + "short"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		prefix, side, err := sniff(r)
		if len(data) < len(Magic) {
			if err == nil || !errors.Is(err, ErrBadHello) {
				t.Fatalf("sniff of %d bytes: got %v, want %v", len(data), err, ErrBadHello)
			}
			return
		}
		if err != nil {
			t.Fatalf("sniff: got %v, want nil", err)
		}
		if want := bytes.HasPrefix(data, []byte(Magic)); side != want {
			t.Fatalf("side: got %v, want %v", side, want)
		}
		if !bytes.Equal(prefix, data[:len(Magic)]) {
			t.Fatalf("prefix: got %q, want %q", prefix, data[:len(Magic)])
		}
		if !side {
			return
		}
		id, err := readID(r)
		rest := data[len(Magic):]
		switch {
		case len(rest) < IDLen && !errors.Is(err, ErrBadHello):
			t.Fatalf("id of %d bytes: got %v, want %v", len(rest), err, ErrBadHello)
		case len(rest) >= IDLen && (err != nil || !bytes.Equal(id[:], rest[:IDLen])):
			t.Fatalf("id: got %x, %v, want %x", id, err, rest[:IDLen])
		}
		if s := id.String(); err == nil {
			if back, ok := parseID(s); !ok || back != id {
				t.Fatalf("parseID(%q): got %x, %v, want %x", s, back, ok, id)
			}
		}
	})
}
