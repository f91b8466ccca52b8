// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import (
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/server"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// RunServer serves rpclab's ping service on the setup's port (0: any free
// one) and answers the setup and each mark with one ServerStatus; the
// server stops when the driver closes the stream.
func (w *Worker) RunServer(stream grpc.BidiStreamingServer[pb.ServerArgs, pb.ServerStatus]) error {
	if !w.claim(&w.server) {
		return status.Errorf(codes.FailedPrecondition, "%v: a RunServer is already running", ErrBusy)
	}
	defer w.release(&w.server)
	args, err := recvSetup(w, stream.Recv)
	if err != nil {
		return err
	}
	cfg := args.GetSetup()
	if cfg == nil {
		return status.Errorf(codes.InvalidArgument, "%v: the first message must be the setup", ErrConfig)
	}
	if sp := cfg.GetSecurityParams(); sp != nil && sp.GetUseTestCa() {
		return status.Errorf(codes.InvalidArgument, "%v: security_params: rpclab's worker serves plaintext only", ErrConfig)
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(w.o.ServerHost, strconv.Itoa(int(cfg.GetPort()))))
	if err != nil {
		return status.Errorf(codes.Unavailable, "worker: listen on port %d: %v", cfg.GetPort(), err)
	}
	s := server.New(server.Options{})
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	port := lis.Addr().(*net.TCPAddr).Port
	w.o.Logger.Info("worker: server started", "port", port)
	clock := newCPUClock()
	st := &pb.ServerStatus{Stats: serverStats(clock), Port: int32(port), Cores: int32(runtime.GOMAXPROCS(0))}
	for {
		if err := stream.Send(st); err != nil {
			return err
		}
		args, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		m := args.GetMark()
		if m == nil {
			return status.Errorf(codes.InvalidArgument, "%v: after the setup, only marks", ErrConfig)
		}
		st = &pb.ServerStatus{Stats: serverStats(clock)}
		if m.GetReset_() {
			clock = newCPUClock()
		}
	}
}

func serverStats(c cpuClock) *pb.ServerStats {
	wall, user, sys := c.since()
	return &pb.ServerStats{TimeElapsed: wall.Seconds(), TimeUser: user.Seconds(), TimeSystem: sys.Seconds()}
}
