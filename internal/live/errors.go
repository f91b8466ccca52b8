// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import "errors"

var (
	// ErrNoProcess: no process has the PID (it never ran, or it exited
	// before the first sample).
	ErrNoProcess = errors.New("no such process")
	// ErrPermission: the process's sockets, or its network namespace,
	// cannot be read by this user. The error names what is needed.
	ErrPermission = errors.New("not permitted to read the process")
	// ErrEnded: the process exited between samples.
	ErrEnded = errors.New("the process ended")
	// ErrUnsupported: live sampling reads Linux's /proc and sock_diag.
	ErrUnsupported = errors.New("live sampling needs Linux")
	// ErrChannelz: the channelz address did not answer as a channelz
	// service within the bounds (not channelz, no answer in time, too
	// many entries).
	ErrChannelz = errors.New("channelz")
)
