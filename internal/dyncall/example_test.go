// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package dyncall_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/server"
)

// ExampleResolveAt calls a method known only by name: ResolveAt finds it
// through the server's reflection (no generated code, no .proto), Request
// parses the request from its JSON mapping, and Call makes the call.
func ExampleResolveAt() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := server.New(server.Options{}) // the ping service, with reflection
	go srv.Serve(lis)
	defer srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	m, err := dyncall.ResolveAt(ctx, lis.Addr().String(), dyncall.Conn{}, nil, "grpc.testing.BenchmarkService/UnaryCall")
	if err != nil {
		fmt.Println(err)
		return
	}
	req, err := m.Request([]byte(`{"responseSize": 3}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cc.Close()
	resp := m.NewResponse()
	n, err := m.Call(ctx, cc, req, resp)
	if err != nil {
		fmt.Println(err)
		return
	}
	payload := resp.ProtoReflect().Descriptor().Fields().ByName("payload")
	body := payload.Message().Fields().ByName("body")
	got := resp.ProtoReflect().Get(payload).Message().Get(body).Bytes()
	fmt.Printf("%s: %d reply, streaming %v, payload of %d bytes\n", m.Path, n, m.ServerStreaming(), len(got))
	// Output:
	// /grpc.testing.BenchmarkService/UnaryCall: 1 reply, streaming false, payload of 3 bytes
}
