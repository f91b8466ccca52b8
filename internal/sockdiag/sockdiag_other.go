// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !linux

package sockdiag

// Socket is a NETLINK_SOCK_DIAG socket: Linux only.
type Socket struct{}

// Open returns ErrUnsupported.
func Open(string) (*Socket, error) { return nil, ErrUnsupported }

// Close does nothing.
func (*Socket) Close() error { return nil }

// DumpTCP returns ErrUnsupported.
func (*Socket) DumpTCP(uint32, bool, func(*Msg)) error { return ErrUnsupported }
