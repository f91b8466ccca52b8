// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/usage"
)

// serveFlags are serve's flags.
type serveFlags struct {
	listen     string
	o          server.Options
	tlsCert    string
	tlsKey     string
	maxBulk    string
	bulkConns  int
	bulkRead   time.Duration
	cpus       []int
	impl       string
	clientsDir string
}

// serveDoc is serve's help.
const serveDoc = `Run the ping server. It speaks grpc.testing.BenchmarkService, so ghz and the
gRPC project's benchmark clients can drive it as well as rpclab, and YDB's
Ydb.Debug.V1.DebugService (PingPlainGrpc, PingStream), so YDB's
grpc_ping_client, rpclab's C++ client in YDB mode and rpclab sweep --service
ydb-debug ping it as they ping a YDB node. Beside them: rpclab.v1.BulkService
(rpclab bulk), rpclab.v1.UsageService (the server's CPU, read by sweeps) and
server reflection (rpclab sweep --call, grpcurl).

The first line on stdout is "listening on ADDR". SIGINT or SIGTERM stops it.

The bulk sidechannel shares the --listen port: a connection that starts
with the sidechannel hello (package sidechannel) carries one call's bytes,
any other is gRPC's.

It has no authentication: keep it on loopback (the default), or give it
--tls-cert and --tls-key. With TLS, every listener serves TLS with that
certificate: the ping and bulk services and the sidechannel on the main
port, and the bulk listeners beside it (grpc-tuned, raw TCP inside TLS,
HTTP/1.1 and h2 over TLS instead of h2c), as "rpclab bulk --tls" expects. Every bulk
request is refused above --max-bulk-size. The raw TCP and HTTP bulk
listeners close connections silent (or idle between requests) for
--bulk-read-timeout; the raw TCP listener and the HTTP listener each hold
at most --max-bulk-conns, answering one more with an error naming the cap;
at most that many sidechannel transfers run and that many sidechannel ids
wait for their call (a call past either gets ResourceExhausted naming it);
a failed accept (out of file descriptors) is retried.

A known answer for a connection limit: --delay D holds every reply for D
(a timer, no CPU), and --max-concurrent-streams N lets one connection carry
N RPCs at a time, so one connection carries at most N/D RPCs a second
whatever the host's CPU, as behind a server or proxy that allows few streams
per connection. "rpclab serve --delay 2ms --max-concurrent-streams 1" caps
a connection at 500 RPCs/s: a client needs one connection per RPC in flight.

With --impl cpp, rpclab builds (if needed) and becomes the C++ asynchronous
completion-queue server of clients/cpp (the same wire; no bulk services);
arguments after -- go to it, e.g. -- --num-cqs=1 --callbacks-per-cq=128.`

const serveExamples = `  rpclab serve --listen 127.0.0.1:50051
  rpclab serve --listen 127.0.0.1:0 --cpus 1   # a free port, pinned to CPU 1
  rpclab serve --delay 2ms --max-concurrent-streams 1   # 500 RPCs/s per connection
  rpclab serve --listen :50051 --tls-cert cert.pem --tls-key key.pem
  rpclab serve --impl cpp --listen 127.0.0.1:50051 -- --num-cqs=2`

func newServeCmd() *cobra.Command {
	var sf serveFlags
	cmd := &cobra.Command{
		Use:     "serve",
		Short:   "Run the ping server (grpc.testing.BenchmarkService)",
		Long:    serveDoc,
		Example: serveExamples,
		Args:    cobra.ArbitraryArgs,
		RunE:    sf.run,
	}
	sf.register(cmd.Flags())
	return cmd
}

// register adds serve's flags to f.
func (sf *serveFlags) register(f *pflag.FlagSet) {
	f.StringVar(&sf.listen, "listen", "127.0.0.1:50051", "address to listen on (\"127.0.0.1:0\" picks a free port; a non-loopback address serves everyone, see --tls-cert)")
	f.Uint32Var(&sf.o.MaxConcurrentStreams, "max-concurrent-streams", 0, "streams allowed per connection (0: unlimited)")
	f.DurationVar(&sf.o.Delay, "delay", 0, fmt.Sprintf("think time before every reply, of every service: a timer that uses no CPU, so one connection carries at most --max-concurrent-streams/--delay RPCs a second (0: none; at most %v)", server.MaxDelay))
	f.Uint32Var(&sf.o.NumStreamWorkers, "num-stream-workers", 0, "serve streams on this many fixed goroutines (0: a goroutine per stream)")
	f.Bool("shared-write-buffer", true, "no effect: grpc-go releases each connection's write buffer between flushes by default")
	_ = f.MarkDeprecated("shared-write-buffer", "grpc-go shares write buffers by default (grpc.SharedWriteBuffer is deprecated); the flag has no effect")
	f.IntVar(&sf.o.WriteBufferSize, "write-buffer", 0, "per-connection write buffer in bytes, 0 to 16 MiB (0: grpc-go's 32 KiB)")
	f.IntVar(&sf.o.ReadBufferSize, "read-buffer", 0, "per-connection read buffer in bytes, 0 to 16 MiB (0: grpc-go's 32 KiB)")
	f.StringVar(&sf.tlsCert, "tls-cert", "", "serve TLS with this PEM certificate (chain); needs --tls-key")
	f.StringVar(&sf.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	f.StringVar(&sf.maxBulk, "max-bulk-size", "", "largest bulk download one request may ask for (default 64GiB)")
	f.IntVar(&sf.bulkConns, "max-bulk-conns", 0, fmt.Sprintf("connections the raw TCP and the HTTP bulk listeners each hold open, sidechannel transfers under way and sidechannel ids pending, at most (0: %d)", server.DefaultMaxBulkConns))
	f.DurationVar(&sf.bulkRead, "bulk-read-timeout", 0, fmt.Sprintf("close a raw TCP or HTTP bulk connection that sends no request for this long (0: %v)", server.DefaultBulkReadTimeout))
	f.IntSliceVar(&sf.cpus, "cpus", nil, "pin the server to these CPUs and set GOMAXPROCS to their count")
	f.StringVar(&sf.impl, "impl", "go", "server implementation: go, or cpp (clients/cpp's async server, built on first use)")
	f.StringVar(&sf.clientsDir, "clients-dir", "", "with --impl cpp: the clients/ folder of an rpclab checkout (default: found above the working directory)")
}

// run starts the server --impl names, after the checks every server shares.
func (sf *serveFlags) run(cmd *cobra.Command, args []string) error {
	if err := checkCPUs("--cpus", sf.cpus); err != nil {
		return err
	}
	if err := checkConnBuffers(sf.o.WriteBufferSize, sf.o.ReadBufferSize); err != nil {
		return err
	}
	if sf.o.Delay < 0 || sf.o.Delay > server.MaxDelay {
		return usage.Wrap(fmt.Errorf("--delay %v: want 0 to %v", sf.o.Delay, server.MaxDelay))
	}
	switch sf.impl {
	case "go":
		if len(args) > 0 {
			return usage.Wrap(fmt.Errorf("serve: unexpected arguments %q (server flags after -- go with --impl cpp)", args))
		}
		return serveGo(cmd, sf)
	case "cpp":
		for _, name := range goServerFlags {
			if cmd.Flags().Changed(name) {
				return usage.Wrap(fmt.Errorf("--%s is a flag of the Go server; the C++ server takes its own after --", name))
			}
		}
		return execCppServer(cmd, sf.clientsDir, sf.listen, sf.cpus, args)
	default:
		return usage.Wrap(fmt.Errorf("--impl: unknown server %q (want go or cpp)", sf.impl))
	}
}

// goServerFlags are the flags only the Go server reads.
var goServerFlags = []string{"delay", "max-concurrent-streams", "num-stream-workers", "shared-write-buffer", "write-buffer", "read-buffer"}

// execCppServer builds clients/cpp if needed, pins this process to cpus,
// and replaces it with the C++ server (the pid, the pinning and the stdout
// stay), which prints "listening on ADDR" itself.
func execCppServer(cmd *cobra.Command, clientsDir, listen string, cpus []int, args []string) error {
	e, err := buildExternal(cmd.Context(), clientsDir, "cpp", []string{"shared"}, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if len(cpus) > 0 {
		if err := procstat.Pin(0, cpus); err != nil {
			return err
		}
	}
	bin := filepath.Join(e.Dir, "rpclab-server")
	argv := append([]string{bin, "--listen", listen}, args...)
	if err := syscall.Exec(bin, argv, os.Environ()); err != nil {
		return fmt.Errorf("serve: start the C++ server %s: %w", bin, err)
	}
	return nil // not reached
}
