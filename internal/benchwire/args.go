// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package benchwire

// Channel arguments rpclab's worker reads (ChannelArg.name). Other names
// are other stacks' (grpc.*) and are left alone; an unknown rpclab.* name
// is an error.
const (
	// ArgConn is a connection layout in rpclab sweep --conn's syntax
	// ("shared", "per-worker", "pool:4"); it replaces the layout that
	// client_channels gives.
	ArgConn = "rpclab.conn"
	// ArgRPCTimeout is a deadline on each RPC in milliseconds (int_value).
	ArgRPCTimeout = "rpclab.rpc_timeout_ms"
	// ArgArrival is the arrival process of a load_params.poisson run
	// (str_value "poisson", the default, or "constant": sends evenly spaced
	// at offered_load, as rpclab sweep --rps --arrival constant sends).
	ArgArrival = "rpclab.arrival"
)
