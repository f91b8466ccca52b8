// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Counts this process's established TCP connections to a target, from the
// operating system's view (/proc/self/fd and /proc/self/net/tcp{,6}), as
// rpclab's own client and `rpclab sweep --client` count them.
#ifndef RPCLAB_PROCNET_H_
#define RPCLAB_PROCNET_H_

#include <string>

namespace rpclab {

// ConnsTo returns the established connections from this process to target
// (HOST:PORT; a name is resolved), or -1 when they cannot be read.
int ConnsTo(const std::string& target);

// NoDelayTo reads TCP_NODELAY on this process's established connections to
// target: 1 when every one has it set (Nagle off), 0 when one has it clear,
// -1 when there is none or it cannot be read. YDB's grpc_ping_client checks
// the same option on its first connection and prints it first.
int NoDelayTo(const std::string& target);

}  // namespace rpclab

#endif  // RPCLAB_PROCNET_H_
