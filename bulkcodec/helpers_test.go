// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulkcodec

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rpclab/rpclab/internal/testutil"
)

const downloadMethod = "/bulkcodec.test.Files/Download"

// chunkSize is the payload of each streamed message.
const chunkSize = 64 << 10

// patternReader yields byte i = byte(i*7 + i>>11) forever.
type patternReader struct{ off int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	for i := range b {
		o := p.off + int64(i)
		b[i] = byte(o*7 + o>>11)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// download streams the requested bytes: with this codec, each chunk read
// into a pooled buffer (Message.Fill) and sent without a copy; with
// grpc-go's codec, each chunk a BytesValue (the same bytes on the wire).
func download(req *wrapperspb.Int64Value, stream grpc.ServerStream) error {
	src := io.LimitReader(&patternReader{}, req.GetValue())
	var m Message
	defer m.Free()
	var pm wrapperspb.BytesValue
	buf := make([]byte, chunkSize)
	raw := contentSubtype(stream.Context()) == Name
	for {
		if raw {
			if _, err := m.Fill(src, chunkSize); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if err := stream.SendMsg(&m); err != nil {
				return err
			}
			continue
		}
		n, err := io.ReadFull(src, buf)
		if n > 0 {
			pm.Value = buf[:n]
			if err := stream.SendMsg(&pm); err != nil {
				return err
			}
		}
		if err != nil {
			return nil
		}
	}
}

// contentSubtype is the call's codec, from its content-type header.
func contentSubtype(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, ct := range md.Get("content-type") {
		if s, ok := strings.CutPrefix(ct, "application/grpc+"); ok {
			return s
		}
	}
	return ""
}

var filesDesc = grpc.ServiceDesc{
	ServiceName: "bulkcodec.test.Files",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{{StreamName: "Download", ServerStreams: true, Handler: func(_ any, stream grpc.ServerStream) error {
		req := new(wrapperspb.Int64Value)
		if err := stream.RecvMsg(req); err != nil {
			return err
		}
		return download(req, stream)
	}}},
}

// startServer serves filesDesc on loopback until the test ends.
func startServer(t testing.TB, opts ...grpc.ServerOption) string {
	t.Helper()
	gs := grpc.NewServer(opts...)
	gs.RegisterService(&filesDesc, nil)
	return testutil.Serve(t, gs)
}

func dial(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// fetch downloads size bytes and hands each chunk's payload to sink; raw
// picks this codec (Message) or grpc-go's (BytesValue).
func fetch(ctx context.Context, cc *grpc.ClientConn, size int64, raw bool, sink func([]byte)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	desc := &filesDesc.Streams[0]
	var opts []grpc.CallOption
	if raw {
		opts = append(opts, grpc.CallContentSubtype(Name))
	}
	st, err := cc.NewStream(ctx, desc, downloadMethod, opts...)
	if err != nil {
		return err
	}
	if err := st.SendMsg(wrapperspb.Int64(size)); err != nil {
		return err
	}
	if err := st.CloseSend(); err != nil {
		return err
	}
	var m Message
	var pm wrapperspb.BytesValue
	for {
		if raw {
			err = st.RecvMsg(&m)
		} else {
			err = st.RecvMsg(&pm)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if raw {
			for _, b := range m.Data {
				sink(b.ReadOnlyData())
			}
			m.Free()
		} else {
			sink(pm.GetValue())
		}
	}
}
