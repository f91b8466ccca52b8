// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rpclab/rpclab/sidechannel"
)

// fileServer serves one file: Get writes it on the call's sidechannel and
// answers with its size. (A real service's method would come from its
// .proto; this one is declared by hand to keep the example whole.)
type fileServer struct {
	sc   *sidechannel.Server
	path string
}

func (s *fileServer) get(ctx context.Context) (*wrapperspb.Int64Value, error) {
	sc, err := s.sc.Accept(ctx)
	if err != nil {
		return nil, err // already a status: no id, expired, reused...
	}
	defer sc.Close()
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := io.Copy(sc, f)
	if err == nil {
		err = sc.Close() // the client reads EOF once every byte is out
	}
	if err != nil {
		return nil, sidechannel.StatusError(err)
	}
	return wrapperspb.Int64(n), nil
}

var fileDesc = grpc.ServiceDesc{
	ServiceName: "example.Files",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Get", Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		if err := dec(new(wrapperspb.StringValue)); err != nil {
			return nil, err
		}
		return srv.(*fileServer).get(ctx)
	}}},
}

// Serving a file beside a gRPC call, through the gRPC server's own port.
func Example() {
	dir, _ := os.MkdirTemp("", "sidechannel")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "file")
	_ = os.WriteFile(path, []byte("the bytes of a large file"), 0o600)

	// Server: one listener, split between gRPC and the sidechannels.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	sc, err := sidechannel.NewServer(lis)
	if err != nil {
		fmt.Println(err)
		return
	}
	gs := grpc.NewServer()
	gs.RegisterService(&fileDesc, &fileServer{sc: sc, path: path})
	go gs.Serve(sc.Listener())
	defer gs.Stop() // closes sc too

	// Client: a gRPC connection and sidechannels to the same address.
	addr := lis.Addr().String()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cc.Close()
	client, err := sidechannel.NewClient(addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	var size wrapperspb.Int64Value
	var got []byte
	err = client.Do(context.Background(), func(ctx context.Context) error {
		return cc.Invoke(ctx, "/example.Files/Get", wrapperspb.String("file"), &size)
	}, func(sc *sidechannel.Conn) error {
		got, err = io.ReadAll(sc)
		return err
	})
	fmt.Printf("%q, %d bytes, err %v\n", got, size.GetValue(), err)
	// Output: "the bytes of a large file", 25 bytes, err <nil>
}
