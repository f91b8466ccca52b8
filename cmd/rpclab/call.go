// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/limitread"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/usage"
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
	conn        dyncall.Conn

	// Set by check: the files --protoset or --proto define (nil: found
	// by reflection), the request's JSON, and that check ran.
	files   *protoregistry.Files
	request []byte
	checked bool
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

// maxDataFileBytes bounds --data-file: a request is at most gRPC's
// default 4 MiB message, and its JSON a few times that.
const maxDataFileBytes = 16 << 20

// check checks, before any server is started or dialled, all that the
// flags name on their own: --call's spelling, --data or --data-file (read
// within maxDataFileBytes), and with --protoset or --proto the files
// (each read within its limit), the method in them and its request. It
// keeps what it read for resolve.
func (cf *callFlags) check(ctx context.Context) error {
	if err := dyncall.CheckCall(cf.call); err != nil {
		return usage.Wrap(fmt.Errorf("--call: %w", err))
	}
	if cf.data != "" && cf.dataFile != "" {
		return usage.Wrap(errors.New("--data and --data-file are exclusive"))
	}
	cf.request = []byte(cf.data)
	if cf.dataFile != "" {
		b, err := limitread.ReadFile(cf.dataFile, maxDataFileBytes)
		if err != nil {
			return usage.Wrap(fmt.Errorf("--data-file: %w", err))
		}
		cf.request = b
	}
	var err error
	switch {
	case cf.protoset != "":
		cf.files, err = dyncall.LoadProtoset(cf.protoset)
	case len(cf.protos) > 0:
		cf.files, err = dyncall.LoadProto(ctx, cf.protos, cf.importPaths)
		err = importHint(err, cf.protos, cf.importPaths)
	}
	if err != nil {
		return usage.Wrap(err)
	}
	if cf.files != nil {
		m, err := dyncall.Find(cf.files, cf.call)
		if err != nil {
			return usage.Wrap(fmt.Errorf("--call: %w", err))
		}
		if _, err := m.Request(cf.request); err != nil {
			return usage.Wrap(err)
		}
	}
	if _, err := cf.conn.DialOptions(); err != nil {
		return usage.Wrap(err)
	}
	cf.checked = true
	return nil
}

// importHint adds to a --proto error that a file was not found what
// --import-path is for: an import is looked up in the import paths (by
// default each --proto file's own folder), which a missing one usually
// means were not given.
func importHint(err error, protos, importPaths []string) error {
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	searched := importPaths
	if len(searched) == 0 {
		for _, p := range protos {
			searched = appendNew(searched, filepath.Dir(p))
		}
	}
	return fmt.Errorf("%w; if an import was not found, give the folder its path is relative to with --import-path (searched: %s)",
		err, strings.Join(searched, ", "))
}

// appendNew appends s to list unless it is there.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// resolve finds --call (in the files check loaded, or by reflection) and
// builds its request from --data or --data-file.
func (cf *callFlags) resolve(ctx context.Context, spec *loadgen.Spec) (*dyncall.Method, proto.Message, error) {
	if !cf.checked {
		if err := cf.check(ctx); err != nil {
			return nil, nil, err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, spec.DialTimeout)
	m, err := dyncall.ResolveAt(rctx, spec.Target, cf.conn, cf.files, cf.call)
	cancel()
	if err != nil {
		if errors.Is(err, dyncall.ErrUnknownMethod) || errors.Is(err, dyncall.ErrBadCall) {
			return nil, nil, usage.Wrap(err)
		}
		return nil, nil, err
	}
	req, err := m.Request(cf.request)
	if err != nil {
		return nil, nil, usage.Wrap(err)
	}
	return m, req, nil
}
