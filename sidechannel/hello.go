// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
)

// Magic opens every sidechannel connection. It shares no prefix with the
// HTTP/2 client preface ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") nor with a TLS
// record (first byte 0x16), so the first len(Magic) bytes tell the two
// apart; both gRPC openings are longer than it.
const Magic = "RPCLAB-SC/1\n"

// MetadataKey carries a call's sidechannel id, 32 lowercase hex digits.
const MetadataKey = "rpclab-sidechannel-id"

// IDLen is the length of an id in bytes: 128 bits from crypto/rand.
const IDLen = 16

// ID names one sidechannel; it is a capability, so it is random and used
// once.
type ID [IDLen]byte

func newID() (ID, error) {
	var id ID
	if _, err := rand.Read(id[:]); err != nil {
		return id, fmt.Errorf("sidechannel: id: %w", err)
	}
	return id, nil
}

func (id ID) String() string { return hex.EncodeToString(id[:]) }

func parseID(s string) (ID, bool) {
	var id ID
	if len(s) != 2*IDLen {
		return id, false
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, false
	}
	return id, true
}

// sniff reads the first len(Magic) bytes of a connection. It reports
// whether they are the magic, and returns them so that a gRPC connection
// can be replayed from its first byte.
func sniff(r io.Reader) (prefix []byte, side bool, err error) {
	buf := make([]byte, len(Magic))
	n, err := io.ReadFull(r, buf)
	if err != nil {
		return buf[:n], false, fmt.Errorf("%w: %d bytes before %v", ErrBadHello, n, err)
	}
	return buf, string(buf) == Magic, nil
}

// readID reads the id that follows the magic (and TLS, if any).
func readID(r io.Reader) (ID, error) {
	var id ID
	if n, err := io.ReadFull(r, id[:]); err != nil {
		return id, fmt.Errorf("%w: id: %d of %d bytes before %v", ErrBadHello, n, IDLen, err)
	}
	return id, nil
}
