// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package sockdiag dumps TCP sockets through the kernel's sock_diag netlink
// interface (what ss uses), narrowed to the states asked for, with each
// socket's TCP_INFO when asked.
//
// It is written here rather than through vishvananda/netlink because that
// library's dumps ask for every state (idiag_states 0xfff) with no way to
// narrow them, and allocate several objects per socket: a host's TIME_WAIT
// sockets are copied out and parsed on every sample, and one sample of a
// process holding 10,000 connections cost about 50 ms of CPU through it
// (internal/live's BenchmarkSample), over the 20 ms a production sampler
// may take. A Socket reuses one buffer and one Msg, so a dump allocates
// nothing per socket.
package sockdiag

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// TCP states of sock_diag (linux/tcp_states.h), as bits of a dump's states.
const (
	Established uint32 = 1 << 1
	Listen      uint32 = 1 << 10
)

// State values of Msg.State.
const (
	StateEstablished = 1
	StateListen      = 10
)

// ErrUnsupported is returned where sock_diag does not exist (not Linux).
var ErrUnsupported = errors.New("sock_diag needs Linux")

// Msg is one socket of a dump. It is valid only during the callback that
// receives it: the Socket reuses it and its buffer.
type Msg struct {
	Family uint8 // AF_INET or AF_INET6
	State  uint8 // StateEstablished, StateListen, ...
	Local  netip.AddrPort
	Remote netip.AddrPort
	Inode  uint32
	info   []byte // INET_DIAG_INFO's payload, or nil
}

// TCPInfo is the part of the kernel's struct tcp_info (linux/tcp.h) that
// rpclab reads: counters since the connection opened and the latest
// gauges. Fields the running kernel does not report are 0.
type TCPInfo struct {
	AppLimited    bool   // tcpi_delivery_rate_app_limited
	Unacked       uint32 // segments sent and not yet acknowledged
	RTT, MinRTT   uint32 // µs
	SndCwnd       uint32 // segments
	NotsentBytes  uint32 // bytes written by the process, not yet sent
	BytesAcked    uint64 // bytes the peer acknowledged
	BytesReceived uint64
	BytesSent     uint64 // including retransmissions
	BytesRetrans  uint64
	DeliveryRate  uint64 // bytes per second
	BusyUS        uint64 // µs with data in flight
	RwndLimitedUS uint64 // µs limited by the peer's receive window
	SndbufLimited uint64 // µs limited by the send buffer
}

// Offsets in struct tcp_info (linux/tcp.h); each field is read only if
// the kernel's payload reaches it (older kernels send a shorter struct).
const (
	offAppLimited    = 7 // the low bit: tcpi_delivery_rate_app_limited:1
	offUnacked       = 24
	offRTT           = 68
	offSndCwnd       = 80
	offBytesAcked    = 120
	offBytesReceived = 128
	offNotsent       = 144
	offMinRTT        = 148
	offDeliveryRate  = 160
	offBusy          = 168
	offRwndLimited   = 176
	offSndbufLimited = 184
	offBytesSent     = 200
	offBytesRetrans  = 208
)

// TCPInfo parses the socket's TCP_INFO; ok is false when the dump did not
// ask for it or the kernel sent none.
func (m *Msg) TCPInfo() (t TCPInfo, ok bool) {
	b := m.info
	if len(b) <= offAppLimited {
		return t, false
	}
	t.AppLimited = b[offAppLimited]&1 != 0
	t.Unacked = u32(b, offUnacked)
	t.RTT, t.MinRTT = u32(b, offRTT), u32(b, offMinRTT)
	t.SndCwnd, t.NotsentBytes = u32(b, offSndCwnd), u32(b, offNotsent)
	t.BytesAcked, t.BytesReceived = u64(b, offBytesAcked), u64(b, offBytesReceived)
	t.BytesSent, t.BytesRetrans = u64(b, offBytesSent), u64(b, offBytesRetrans)
	t.DeliveryRate, t.BusyUS = u64(b, offDeliveryRate), u64(b, offBusy)
	t.RwndLimitedUS, t.SndbufLimited = u64(b, offRwndLimited), u64(b, offSndbufLimited)
	return t, true
}

func u32(b []byte, off int) uint32 {
	if len(b) < off+4 {
		return 0
	}
	return binary.NativeEndian.Uint32(b[off:])
}

func u64(b []byte, off int) uint64 {
	if len(b) < off+8 {
		return 0
	}
	return binary.NativeEndian.Uint64(b[off:])
}
