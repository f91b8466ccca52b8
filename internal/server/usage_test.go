// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"context"
	"net"
	"os"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/proto/usagepb"
	"github.com/rpclab/rpclab/proto/ydbpb"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestUsage: rpclab serve answers UsageService with its own process's CPU
// time (the test shares the process, so the answer lies between two reads
// of getrusage around the call), its CPUs and pid, and the CPU time grows
// with the work the server does.
func TestUsage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx, lis, server.Options{}) }()
	defer func() { stop(); <-done }()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	u := usagepb.NewUsageServiceClient(cc)

	read := func() *usagepb.UsageResponse {
		t.Helper()
		before, err := procstat.ReadUsage()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := u.Usage(ctx, &usagepb.UsageRequest{})
		if err != nil {
			t.Fatalf("Usage: %v", err)
		}
		after, err := procstat.ReadUsage()
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetCpuNs(); got < int64(before.CPU) || got > int64(after.CPU) {
			t.Errorf("got cpu_ns %d, want it between this process's %d and %d", got, before.CPU, after.CPU)
		}
		return resp
	}
	first := read()
	d := ydbpb.NewDebugServiceClient(cc)
	for range 500 {
		if _, err := d.PingPlainGrpc(ctx, &ydbpb.PlainGrpcRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	second := read()
	if second.GetCpuNs() <= first.GetCpuNs() {
		t.Errorf("cpu_ns went from %d to %d over 500 pings, want it to grow", first.GetCpuNs(), second.GetCpuNs())
	}
	cpus, err := procstat.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if second.GetCpus() != int32(len(cpus)) || second.GetPid() != int64(os.Getpid()) || second.GetServer() != "go" {
		t.Errorf("got cpus %d, pid %d, server %q; want %d, %d, \"go\"", second.GetCpus(), second.GetPid(), second.GetServer(), len(cpus), os.Getpid())
	}
}
