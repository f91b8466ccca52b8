// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package dyncall calls any gRPC method without generated code: it finds the
// method's descriptor through server reflection or a protoset file, builds
// the request from JSON with dynamicpb and protojson, and makes the dial
// options for TLS and request metadata. Load generators hand the resolved
// Method to their workers; nothing here measures.
package dyncall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/rpclab/rpclab/internal/limitread"
)

// ErrUnknownMethod is returned when the service or method is not found.
var ErrUnknownMethod = errors.New("dyncall: unknown method")

// ErrBadCall is returned for a method name that cannot name a method
// (not package.Service/Method): CheckCall finds it without a server.
var ErrBadCall = errors.New("dyncall: not a method name")

// Size limits of the files dyncall reads: a file past its limit (or a
// device that never ends) is an error wrapping limitread.ErrTooLarge.
const (
	// MaxProtosetBytes bounds a FileDescriptorSet: the descriptors of the
	// whole of googleapis with imports are about 10 MiB.
	MaxProtosetBytes = 64 << 20
	// MaxProtoBytes bounds one .proto source file (and each import).
	MaxProtoBytes = 8 << 20
	// MaxCACertBytes bounds a PEM file of CA certificates (a system's whole
	// bundle is about 200 KiB).
	MaxCACertBytes = 4 << 20
)

// Method is a resolved method: its path on the wire and its descriptor.
type Method struct {
	// Path is "/pkg.Service/Method", as grpc.ClientConn.Invoke takes it.
	Path string
	Desc protoreflect.MethodDescriptor
}

// ServerStreaming reports whether the server sends a stream of replies.
func (m *Method) ServerStreaming() bool { return m.Desc.IsStreamingServer() }

// NewResponse returns an empty response message.
func (m *Method) NewResponse() proto.Message { return dynamicpb.NewMessage(m.Desc.Output()) }

// Request parses data (protojson: the JSON mapping of the input type) into a
// request message. Empty data is the empty message.
func (m *Method) Request(data []byte) (proto.Message, error) {
	msg := dynamicpb.NewMessage(m.Desc.Input())
	if len(strings.TrimSpace(string(data))) == 0 {
		return msg, nil
	}
	if err := protojson.Unmarshal(data, msg); err != nil {
		return nil, fmt.Errorf("dyncall: --data is not a valid %s: %w", m.Desc.Input().FullName(), err)
	}
	return msg, nil
}

// StreamDesc describes the method for grpc.ClientConn.NewStream.
func (m *Method) StreamDesc() *grpc.StreamDesc {
	return &grpc.StreamDesc{StreamName: string(m.Desc.Name()), ServerStreams: m.Desc.IsStreamingServer(), ClientStreams: m.Desc.IsStreamingClient()}
}

// Call makes one call of m with req and returns how many replies came
// (1 for a unary call). Client-streaming methods are refused.
func (m *Method) Call(ctx context.Context, cc grpc.ClientConnInterface, req, resp proto.Message) (int, error) {
	if m.Desc.IsStreamingClient() {
		return 0, fmt.Errorf("dyncall: %s is client-streaming; only unary and server-streaming methods are supported", m.Path)
	}
	if !m.Desc.IsStreamingServer() {
		if err := cc.Invoke(ctx, m.Path, req, resp); err != nil {
			return 0, err
		}
		return 1, nil
	}
	s, err := cc.NewStream(ctx, m.StreamDesc(), m.Path)
	if err != nil {
		return 0, err
	}
	if err := s.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	if err := s.CloseSend(); err != nil {
		return 0, err
	}
	n := 0
	for {
		if err := s.RecvMsg(resp); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}

// splitCall parses "pkg.Service/Method" (or "pkg.Service.Method").
func splitCall(call string) (svc, method string, err error) {
	call = strings.TrimPrefix(strings.TrimSpace(call), "/")
	if i := strings.LastIndexByte(call, '/'); i > 0 {
		svc, method = call[:i], call[i+1:]
	} else if i := strings.LastIndexByte(call, '.'); i > 0 {
		svc, method = call[:i], call[i+1:]
	}
	if svc == "" || method == "" {
		return "", "", fmt.Errorf("%w: %q: want package.Service/Method", ErrBadCall, call)
	}
	return svc, method, nil
}

// CheckCall checks that call can name a method ("pkg.Service/Method"),
// without resolving it: a caller checks it before any server is started
// or dialled. Its error wraps ErrBadCall.
func CheckCall(call string) error {
	_, _, err := splitCall(call)
	return err
}

// Find resolves call ("pkg.Service/Method") in files.
func Find(files *protoregistry.Files, call string) (*Method, error) {
	svc, name, err := splitCall(call)
	if err != nil {
		return nil, err
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil, fmt.Errorf("%w: service %q not found: %v", ErrUnknownMethod, svc, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a service", ErrUnknownMethod, svc)
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		var names []string
		for i := 0; i < sd.Methods().Len(); i++ {
			names = append(names, string(sd.Methods().Get(i).Name()))
		}
		return nil, fmt.Errorf("%w: service %s has no method %q (it has %s)", ErrUnknownMethod, svc, name, strings.Join(names, ", "))
	}
	return &Method{Path: "/" + svc + "/" + name, Desc: md}, nil
}

// LoadProtoset reads a FileDescriptorSet (protoc --descriptor_set_out
// --include_imports, or buf build -o x.protoset).
func LoadProtoset(path string) (*protoregistry.Files, error) {
	b, err := limitread.ReadFile(path, MaxProtosetBytes)
	if err != nil {
		return nil, fmt.Errorf("dyncall: --protoset: %w", err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("dyncall: --protoset %s: not a FileDescriptorSet: %w", path, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("dyncall: --protoset %s: %w (was it built with --include_imports?)", path, err)
	}
	return files, nil
}

// Reflect fetches the files that define symbol (a service name) and their
// imports from the server's reflection service (grpc.reflection.v1).
func Reflect(ctx context.Context, cc grpc.ClientConnInterface, symbol string) (*protoregistry.Files, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := rpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, reflectErr(err)
	}
	defer func() { _ = stream.CloseSend() }()
	ask := func(req *rpb.ServerReflectionRequest) ([][]byte, error) {
		if err := stream.Send(req); err != nil {
			_, rerr := stream.Recv()
			if rerr != nil {
				return nil, reflectErr(rerr)
			}
			return nil, reflectErr(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			return nil, reflectErr(err)
		}
		if e := resp.GetErrorResponse(); e != nil {
			return nil, fmt.Errorf("%w: reflection: %s", ErrUnknownMethod, e.GetErrorMessage())
		}
		return resp.GetFileDescriptorResponse().GetFileDescriptorProto(), nil
	}
	got := map[string]*descriptorpb.FileDescriptorProto{}
	add := func(raw [][]byte) error {
		for _, b := range raw {
			fd := &descriptorpb.FileDescriptorProto{}
			if err := proto.Unmarshal(b, fd); err != nil {
				return fmt.Errorf("dyncall: reflection sent a bad descriptor: %w", err)
			}
			got[fd.GetName()] = fd
		}
		return nil
	}
	raw, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol}})
	if err != nil {
		if errors.Is(err, ErrUnknownMethod) {
			return nil, fmt.Errorf("%w (service %q)", err, symbol)
		}
		return nil, err
	}
	if err := add(raw); err != nil {
		return nil, err
	}
	// Fetch imports the server did not send along.
	for {
		var missing string
		for _, fd := range got {
			for _, dep := range fd.GetDependency() {
				if _, ok := got[dep]; !ok {
					missing = dep
				}
			}
		}
		if missing == "" {
			break
		}
		raw, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: missing}})
		if err != nil {
			return nil, err
		}
		if err := add(raw); err != nil {
			return nil, err
		}
		if _, ok := got[missing]; !ok {
			return nil, fmt.Errorf("dyncall: reflection did not send %s", missing)
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, fd := range got {
		set.File = append(set.File, fd)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("dyncall: reflection: %w", err)
	}
	return files, nil
}

func reflectErr(err error) error {
	if status.Code(err) == codes.Unimplemented {
		return fmt.Errorf("dyncall: the server does not offer reflection (grpc.reflection.v1); give --proto or --protoset: %w", err)
	}
	return fmt.Errorf("dyncall: reflection: %w", err)
}

// Resolve finds call through files when given (from --proto/--protoset),
// otherwise through the server's reflection on cc.
func Resolve(ctx context.Context, cc grpc.ClientConnInterface, files *protoregistry.Files, call string) (*Method, error) {
	if files == nil {
		svc, _, err := splitCall(call)
		if err != nil {
			return nil, err
		}
		if files, err = Reflect(ctx, cc, svc); err != nil {
			return nil, err
		}
	}
	return Find(files, call)
}
