// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"os"
	"runtime"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/proto/usagepb"
)

// Usage implements rpclab.v1.UsageService: the server process's own CPU
// time, which the load generator reads at a step's start and end so that a
// ping record carries the server's CPU over its interval.
type Usage struct {
	usagepb.UnimplementedUsageServiceServer
}

var _ usagepb.UsageServiceServer = (*Usage)(nil)

// RegisterUsage registers the usage service on s.
func RegisterUsage(s grpc.ServiceRegistrar) {
	usagepb.RegisterUsageServiceServer(s, &Usage{})
}

// Usage answers with the process's user+system CPU time and the CPUs it may
// run on.
func (*Usage) Usage(context.Context, *usagepb.UsageRequest) (*usagepb.UsageResponse, error) {
	u, err := procstat.ReadUsage()
	if err != nil {
		return nil, status.Error(codes.Unimplemented, err.Error())
	}
	cpus := runtime.NumCPU()
	if allowed, err := procstat.AllowedCPUs(); err == nil && len(allowed) > 0 {
		cpus = len(allowed)
	}
	return &usagepb.UsageResponse{CpuNs: int64(u.CPU), Cpus: int32(cpus), Pid: int64(os.Getpid()), Server: "go"}, nil
}
