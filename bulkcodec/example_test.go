// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rpclab/rpclab/bulkcodec"
)

// A server-streaming download: the server reads its source into pooled
// buffers and sends them without a copy; the client writes each message's
// buffers out and frees them. (The service is declared by hand to keep the
// example whole; a real one comes from its .proto, with a Chunk message of
// one bytes field 1.)
func Example() {
	src := "a file's bytes, streamed in chunks of eight bytes"
	desc := grpc.ServiceDesc{
		ServiceName: "example.Files",
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{StreamName: "Get", ServerStreams: true, Handler: func(_ any, st grpc.ServerStream) error {
			if err := st.RecvMsg(new(wrapperspb.StringValue)); err != nil {
				return err
			}
			r := strings.NewReader(src)
			var m bulkcodec.Message
			defer m.Free()
			for {
				if _, err := m.Fill(r, 8); errors.Is(err, io.EOF) {
					return nil
				} else if err != nil {
					return err
				}
				if err := st.SendMsg(&m); err != nil {
					return err
				}
			}
		}}},
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	gs := grpc.NewServer(bulkcodec.ServerOptions()...)
	gs.RegisterService(&desc, nil)
	go gs.Serve(lis)
	defer gs.Stop()

	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, bulkcodec.DialOptions()...)
	cc, err := grpc.NewClient(lis.Addr().String(), opts...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cc.Close()
	st, err := cc.NewStream(context.Background(), &desc.Streams[0], "/example.Files/Get")
	if err == nil {
		err = st.SendMsg(wrapperspb.String("file"))
	}
	if err == nil {
		err = st.CloseSend()
	}
	var got strings.Builder
	var m bulkcodec.Message
	for err == nil {
		if err = st.RecvMsg(&m); err == nil {
			_, err = m.WriteTo(&got) // frees m's buffers
		}
	}
	fmt.Printf("%q, %v\n", got.String(), err)
	// Output: "a file's bytes, streamed in chunks of eight bytes", EOF
}

// Borrow lends bytes that outlive the transfer, such as a file held in
// memory, to a Message: no copy, and no allocation per message once warm.
// A server-streaming handler sends one slice per message and frees its
// own reference after each SendMsg; the transport frees its own after
// writing the bytes.
func ExampleBorrow() {
	file := bytes.Repeat([]byte("a file held in memory "), 10000)
	send := func(m *bulkcodec.Message) error { return nil } // stream.SendMsg in a handler
	var m bulkcodec.Message
	sent := 0
	for off := 0; off < len(file); off += 64 << 10 {
		m.Data = append(m.Data[:0], bulkcodec.Borrow(file[off:min(off+64<<10, len(file))]))
		if err := send(&m); err != nil {
			fmt.Println(err)
			return
		}
		sent += m.Len()
		m.Free()
	}
	fmt.Println(sent == len(file))
	// Output: true
}
