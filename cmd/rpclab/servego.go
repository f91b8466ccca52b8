// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/usage"
)

// serveGo runs rpclab's Go server until the command's context ends.
func serveGo(cmd *cobra.Command, sf *serveFlags) error {
	if len(sf.cpus) > 0 {
		if err := procstat.Pin(0, sf.cpus); err != nil {
			return err
		}
		runtime.GOMAXPROCS(len(sf.cpus))
	}
	bopts, err := sf.options()
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", sf.listen)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	host := warnIfOpen(cmd.ErrOrStderr(), lis.Addr(), sf.o.TLS != nil)
	b, err := startBulk(cmd.Context(), host, sf.o.TLS, bopts)
	if err != nil {
		lis.Close()
		return err
	}
	defer b.Close()
	sf.o.Bulk = b
	fmt.Fprintf(cmd.OutOrStdout(), "%s%s\n", server.ListeningPrefix, lis.Addr())
	return server.Serve(cmd.Context(), lis, sf.o)
}

// warnIfOpen warns on stderr when addr, served without TLS, is not a
// loopback address, and returns addr's host.
func warnIfOpen(stderr io.Writer, addr net.Addr, tls bool) string {
	host, _, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); !tls && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(stderr, "rpclab: warning: serving %s without TLS or authentication to every host that can reach it\n", addr)
	}
	return host
}

// startBulk starts the bulk services' listeners on host beside the gRPC
// port, over TLS when tlsCfg is set (clients learn their ports from
// BulkService.Info).
func startBulk(ctx context.Context, host string, tlsCfg *tls.Config, bopts []server.BulkOption) (*server.Bulk, error) {
	b, err := server.StartBulk(ctx, host, append(bopts, server.WithBulkTLS(tlsCfg))...)
	if errors.Is(err, server.ErrBadOption) {
		return nil, usage.Wrap(err)
	}
	return b, err
}

// options maps the TLS and bulk flags to the server's options, naming the
// flag of a bad one.
func (sf *serveFlags) options() ([]server.BulkOption, error) {
	if sf.tlsCert != "" || sf.tlsKey != "" {
		cfg, err := server.LoadTLS(sf.tlsCert, sf.tlsKey)
		if errors.Is(err, server.ErrBadOption) {
			return nil, usage.Wrap(fmt.Errorf("--tls-cert and --tls-key: %w", err))
		} else if err != nil {
			return nil, usage.Wrap(fmt.Errorf("--tls-cert %s, --tls-key %s: %w", sf.tlsCert, sf.tlsKey, err))
		}
		sf.o.TLS = cfg
	}
	var maxBulkBytes int64
	if sf.maxBulk != "" {
		n, err := result.ParseBytes(sf.maxBulk)
		if err != nil {
			return nil, usage.Wrap(fmt.Errorf("--max-bulk-size: %w", err))
		}
		maxBulkBytes = n
	}
	var bopts []server.BulkOption
	for _, f := range []struct {
		name string
		opt  server.BulkOption
	}{
		{"--max-bulk-size", server.WithMaxBulkSize(maxBulkBytes)},
		{"--max-bulk-conns", server.WithMaxBulkConns(sf.bulkConns)},
		{"--bulk-read-timeout", server.WithBulkReadTimeout(sf.bulkRead)},
	} {
		if _, err := server.NewBulk(f.opt); err != nil { // each checked alone, to name its flag
			return nil, usage.Wrap(fmt.Errorf("%s: %w", f.name, err))
		}
		bopts = append(bopts, f.opt)
	}
	return bopts, nil
}
