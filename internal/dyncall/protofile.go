// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package dyncall

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/rpclab/rpclab/internal/limitread"
)

// LoadProto compiles .proto files (rpclab sweep --proto) with
// bufbuild/protocompile, so no protoc is needed. Imports resolve against
// importPaths (default: each file's own directory) and the well-known types.
func LoadProto(ctx context.Context, files []string, importPaths []string) (*protoregistry.Files, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("dyncall: --proto: no file given")
	}
	names := make([]string, len(files))
	paths := append([]string(nil), importPaths...)
	for i, f := range files {
		if len(importPaths) == 0 {
			paths = append(paths, filepath.Dir(f))
			names[i] = filepath.Base(f)
		} else {
			names[i] = f
			// A path given through an import path is named relative to it.
			for _, ip := range importPaths {
				if rel, err := filepath.Rel(ip, f); err == nil && !strings.HasPrefix(rel, "..") && filepath.IsAbs(f) == filepath.IsAbs(ip) {
					names[i] = rel
					break
				}
			}
		}
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths,
			Accessor: func(path string) (io.ReadCloser, error) { return limitread.Open(path, MaxProtoBytes) }}),
	}
	linked, err := c.Compile(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("dyncall: --proto: %w", err)
	}
	// Collect every file and its imports, once each.
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	for _, f := range linked {
		collect(f, seen, set)
	}
	out, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("dyncall: --proto: %w", err)
	}
	return out, nil
}

// collect adds fd's imports, then fd, to set (dependencies first).
func collect(fd protoreflect.FileDescriptor, seen map[string]bool, set *descriptorpb.FileDescriptorSet) {
	if seen[fd.Path()] {
		return
	}
	seen[fd.Path()] = true
	imps := fd.Imports()
	for i := 0; i < imps.Len(); i++ {
		collect(imps.Get(i).FileDescriptor, seen, set)
	}
	set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
}
