// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"google.golang.org/grpc"
	channelzsvc "google.golang.org/grpc/channelz/service"

	"github.com/rpclab/rpclab/internal/usage"
)

// serveChannelz serves grpc-go's channelz service (grpc.channelz.v1) of
// this process on 127.0.0.1:port, so rpclab doctor --pid --channelz can
// read the Go client's channels, subchannels and sockets. Port 0 serves
// nothing. It returns the function that stops it.
func serveChannelz(port int, stderr io.Writer) (stop func(), err error) {
	if port == 0 {
		return func() {}, nil
	}
	if port < 0 || port > 65535 {
		return nil, usage.Wrap(fmt.Errorf("--channelz-port: %d is not a TCP port", port))
	}
	lis, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, usage.Wrap(fmt.Errorf("--channelz-port: %w", err))
	}
	s := grpc.NewServer()
	channelzsvc.RegisterChannelzServiceToServer(s)
	go func() { _ = s.Serve(lis) }()
	fmt.Fprintf(stderr, "rpclab: channelz on %s\n", lis.Addr())
	return s.Stop, nil
}
