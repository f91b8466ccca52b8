// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rpclab/rpclab/anycall"
	"github.com/rpclab/rpclab/loadgen"
)

// callFlags describe a method to call instead of the ping: --call, its
// request (--data, --data-file), where its definition comes from when the
// server has no reflection (--protoset, --proto, --import-path), and the
// connection's TLS and metadata. sweep's open loop and doctor take the
// same flags.
type callFlags struct {
	call        string
	data        string
	dataFile    string
	protoset    string
	protos      []string
	importPaths []string
	conn        anycall.Conn
}

// register adds --call (described by callHelp) and the flags around it.
func (cf *callFlags) register(f *pflag.FlagSet, callHelp string) {
	f.StringVar(&cf.call, "call", "", callHelp)
	f.StringVar(&cf.data, "data", "", "request of --call as JSON (protojson mapping of the input type; default {})")
	f.StringVar(&cf.dataFile, "data-file", "", "read the --call request JSON from this file")
	f.StringVar(&cf.protoset, "protoset", "", "FileDescriptorSet defining --call (protoc --include_imports --descriptor_set_out), for servers without reflection")
	f.StringSliceVar(&cf.protos, "proto", nil, ".proto files defining --call, compiled in process (no protoc needed), for servers without reflection")
	f.StringSliceVar(&cf.importPaths, "import-path", nil, "import paths of --proto (default: each file's own folder)")
	f.BoolVar(&cf.conn.TLS, "tls", false, "connect with TLS")
	f.StringVar(&cf.conn.CACert, "cacert", "", "PEM file of CA certificates to trust (with --tls; default the system roots)")
	f.BoolVar(&cf.conn.InsecureSkipVerify, "insecure-skip-verify", false, "with --tls, accept any server certificate")
	f.StringVar(&cf.conn.Authority, "authority", "", ":authority header, and the name the server certificate must carry")
	f.StringArrayVar(&cf.conn.Headers, "header", nil, "metadata key=value sent with every call (repeatable)")
}

// inputs are the files these flags read (--data-file, --protoset, --proto,
// --cacert): no output may be one of them.
func (cf *callFlags) inputs() []string {
	var in []string
	for _, p := range append([]string{cf.dataFile, cf.protoset, cf.conn.CACert}, cf.protos...) {
		if p != "" {
			in = append(in, p)
		}
	}
	return in
}

// resolve finds --call (through --protoset, --proto or reflection) and
// builds its request from --data or --data-file.
func (cf *callFlags) resolve(ctx context.Context, spec *loadgen.Spec) (*anycall.Method, proto.Message, error) {
	var files *protoregistry.Files
	var err error
	switch {
	case cf.protoset != "":
		if files, err = anycall.LoadProtoset(cf.protoset); err != nil {
			return nil, nil, usageError{err}
		}
	case len(cf.protos) > 0:
		if files, err = anycall.LoadProto(ctx, cf.protos, cf.importPaths); err != nil {
			return nil, nil, usageError{err}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, spec.DialTimeout)
	m, err := anycall.ResolveAt(rctx, spec.Target, cf.conn, files, cf.call)
	cancel()
	if err != nil {
		if errors.Is(err, anycall.ErrUnknownMethod) {
			return nil, nil, usageError{err}
		}
		return nil, nil, err
	}
	if cf.data != "" && cf.dataFile != "" {
		return nil, nil, usageError{errors.New("--data and --data-file are exclusive")}
	}
	data := []byte(cf.data)
	if cf.dataFile != "" {
		if data, err = os.ReadFile(cf.dataFile); err != nil {
			return nil, nil, usageError{fmt.Errorf("--data-file: %w", err)}
		}
	}
	req, err := m.Request(data)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return m, req, nil
}
