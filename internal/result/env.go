// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"os"
	"runtime"
)

// GoEnv is the environment of a Go client in this process, the one
// builder of it for every record kind rpclab's Go engines write (ping,
// bulk, flow): language go, grpc-go at grpcVersion (the caller's
// grpc.Version: result does not import grpc), this runtime, its host and
// OS, and clientCPUs, the CPUs the client is pinned to (nil: unpinned).
func GoEnv(grpcVersion string, clientCPUs []int) Env {
	host, _ := os.Hostname()
	return Env{
		Language:       "go",
		GRPCImpl:       "grpc-go",
		GRPCVersion:    grpcVersion,
		RuntimeVersion: runtime.Version(),
		HostCPUs:       runtime.NumCPU(),
		ClientCPUs:     clientCPUs,
		Hostname:       host,
		OS:             runtime.GOOS,
	}
}
