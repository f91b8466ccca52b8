// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/bulkcodec"
	"github.com/rpclab/rpclab/internal/accept"
	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/proto/bulkpb"
	"github.com/rpclab/rpclab/sidechannel"
)

// wrapListener wraps each bulk listener StartBulk opens (tests replace it
// to inject Accept errors).
var wrapListener = func(l net.Listener) net.Listener { return l }

// TunedOptions are the server settings of the grpc-tuned listener:
// package bulkcodec's (none today: the codec, which the client picks by
// its content-subtype, is what cuts the server's CPU; bulkcodec.ServerOptions
// and docs/bulk.md say what was measured and left out). grpc-tuned keeps
// its own listener so that the flags of "rpclab serve", which apply to the
// main server and so to the grpc transport, never change it.
func TunedOptions() []grpc.ServerOption {
	return bulkcodec.ServerOptions()
}

// Bulk serves rpclab.v1.BulkService: downloads of the deterministic stream
// of package bulk over gRPC, and the sidechannel download (package
// sidechannel, on the port Serve serves it on). StartBulk also serves the
// other transports (grpc-tuned, raw TCP, HTTP/1.1 and h2c) and Info tells
// clients where they are.
type Bulk struct {
	bulkpb.UnimplementedBulkServiceServer

	info     bulkpb.InfoResponse                // addresses only; set before serving
	sc       atomic.Pointer[sidechannel.Server] // set by Serve (listen)
	scActive atomic.Int64                       // sidechannel transfers under way
	cfg      bulkConfig

	closers   []func() // set up by StartBulk before it returns
	wg        sync.WaitGroup
	closeOnce sync.Once
	quit      chan struct{} // closed by Close

	tcp, http *cappedListener // set up by StartBulk before it returns
}

var _ bulkpb.BulkServiceServer = (*Bulk)(nil)

// NewBulk returns a Bulk without the extra listeners: Download and Info
// work, the other transports are absent, and the sidechannel works once
// Serve serves it. The options are StartBulk's; only the maximum size and
// the sidechannel's bounds apply without the listeners.
func NewBulk(opts ...BulkOption) (*Bulk, error) {
	b := &Bulk{cfg: defaultBulkConfig(), quit: make(chan struct{})}
	for _, o := range opts {
		if err := o(&b.cfg); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// SplitHandshakes is how many connections the split main port reads for
// their first bytes at once (sidechannel.WithMaxHandshakes), gRPC's
// included; one accepted past it is closed. The package's default, 1024,
// dropped 678 of 3000 gRPC clients dialling "rpclab serve" at once (their
// first RPC failed; a per-worker sweep opens that many), where the gRPC
// server alone dropped none. At this value the process's file descriptor
// limit is the bound, as it is for a gRPC server alone, and each
// connection in handshake is still closed after the hello timeout.
const SplitHandshakes = 1 << 16

// listen splits lis between the gRPC server and b's sidechannels (package
// sidechannel: a connection that starts with its hello is a call's
// sidechannel, any other goes to gRPC) and returns the sidechannel server,
// whose Listener is gRPC's. tlsCfg is the gRPC server's (nil: plaintext):
// a sidechannel then runs TLS as the call does. At most WithMaxBulkConns
// calls wait for their hello, and apart from them at most WithMaxBulkConns
// hellos for their call (a stranger's flood of hellos evicts its own
// oldest, never a call).
func (b *Bulk) listen(lis net.Listener, tlsCfg *tls.Config) (*sidechannel.Server, error) {
	opts := append([]sidechannel.Option{sidechannel.WithTLS(tlsCfg), sidechannel.WithMaxPending(b.cfg.maxConns),
		sidechannel.WithMaxHellos(b.cfg.maxConns), sidechannel.WithMaxHandshakes(SplitHandshakes)}, b.cfg.sidechannel...)
	sc, err := sidechannel.NewServer(lis, opts...)
	if err != nil {
		return nil, fmt.Errorf("server: bulk: %w", err)
	}
	if !b.sc.CompareAndSwap(nil, sc) {
		sc.Close()
		return nil, errors.New("server: bulk: this Bulk is already served")
	}
	return sc, nil
}

// RegisterBulk registers b (a NewBulk when nil) on s.
func RegisterBulk(s *grpc.Server, b *Bulk) {
	if b == nil {
		b, _ = NewBulk() // no options, no error
	}
	bulkpb.RegisterBulkServiceServer(s, b)
}

// StartBulk starts the bulk listeners on host (port 0 each): a grpc-tuned
// gRPC server, raw TCP and HTTP (1.1 and h2c), each over TLS under
// WithBulkTLS (HTTP/1.1 and h2 then); the sidechannel has none of
// its own (Serve splits the main gRPC port). They run until ctx ends or
// Close is called. Every transport refuses a request above the maximum
// size (WithMaxBulkSize); the raw TCP and HTTP listeners close a
// connection that stays silent (WithBulkReadTimeout); the raw TCP and HTTP
// listeners cap how many connections are open, and the sidechannel how
// many transfers run and how many ids wait (WithMaxBulkConns), and answer
// one past the cap with an error naming it (a bulk.RefusalMagic message,
// HTTP 503, ResourceExhausted); the raw TCP listener keeps accepting after
// an Accept error (package accept's backoff), as the HTTP one and the
// sidechannel's split do.
func StartBulk(ctx context.Context, host string, opts ...BulkOption) (*Bulk, error) {
	b, err := NewBulk(opts...)
	if err != nil {
		return nil, err
	}
	var lis [3]net.Listener // grpc-tuned, tcp, http
	for i := range lis {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			for _, l := range lis[:i] {
				l.Close()
			}
			return nil, fmt.Errorf("server: bulk: %w", err)
		}
		lis[i] = wrapListener(l)
	}
	// Info reads these; they are set before anything is served.
	b.info.GrpcTunedAddr = lis[0].Addr().String()
	b.info.TcpAddr = lis[1].Addr().String()
	b.info.HttpAddr = lis[2].Addr().String()

	b.tcp = newCappedListener(lis[1], b.cfg.maxConns)
	b.http = newCappedListener(lis[2], b.cfg.maxConns)
	topts := TunedOptions()
	var rawLis net.Listener = b.tcp
	if b.cfg.tls != nil {
		topts = append(topts, grpc.Creds(credentials.NewTLS(b.cfg.tls)))
		rawLis = tls.NewListener(b.tcp, b.cfg.tls) // each handshake runs in its conn's first read, under its deadline
	}
	tuned := grpc.NewServer(topts...)
	RegisterBulk(tuned, b)
	b.goServe(func() { _ = tuned.Serve(lis[0]) }, tuned.Stop)

	b.goServe(func() { b.acceptLoop(rawLis, b.serveTCP) }, func() { b.tcp.Close() })

	// An idle keep-alive connection is closed after the read timeout, so
	// idle clients cannot hold every slot under the cap.
	hs := &http.Server{
		Handler:           http.HandlerFunc(b.serveHTTP),
		ReadHeaderTimeout: b.cfg.readTimeout,
		IdleTimeout:       b.cfg.readTimeout,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, overCapKey{}, overCap(c))
		},
	}
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	if b.cfg.tls != nil {
		hs.Protocols.SetHTTP2(true) // h2 by ALPN
		hs.TLSConfig = b.cfg.tls.Clone()
		b.goServe(func() { _ = hs.ServeTLS(b.http, "", "") }, func() { hs.Close() })
	} else {
		hs.Protocols.SetUnencryptedHTTP2(true)
		b.goServe(func() { _ = hs.Serve(b.http) }, func() { hs.Close() })
	}

	context.AfterFunc(ctx, b.Close)
	return b, nil
}

func (b *Bulk) goServe(serve, stop func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		serve()
	}()
	b.closers = append(b.closers, stop)
}

// Close stops the extra listeners, closes their connections and waits for
// their loops to end. It is safe to call more than once, concurrently.
func (b *Bulk) Close() {
	b.closeOnce.Do(func() {
		close(b.quit)
		for _, c := range b.closers {
			c()
		}
		for _, l := range []*cappedListener{b.tcp, b.http} {
			if l != nil {
				l.closeAll()
			}
		}
		b.wg.Wait()
	})
}

// acceptLoop serves the raw TCP listener until it is closed. An Accept
// error other than the listener's closing is retried after a backoff; a
// connection past the cap gets a refusal naming it.
func (b *Bulk) acceptLoop(lis net.Listener, handle func(net.Conn)) {
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := accept.Next(lis, b.quit, nil)
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			if overCap(c) { // refuse, not queue: a raw peer reads why
				writeRefusal(c, fmt.Sprintf("server: the bulk tcp listener holds %d connections, its cap: try again when one closes", b.cfg.maxConns))
				return
			}
			handle(c)
		}()
	}
}

// maximum size per request.
func (b *Bulk) checkSizes(size int64, chunk int) error {
	if err := bulk.CheckSizes(size, chunk); err != nil {
		return err
	}
	if size > b.cfg.maxSize {
		return fmt.Errorf("%w: size %d is above this server's maximum of %d bytes (%s)", ErrTooLarge, size, b.cfg.maxSize, result.FormatBytes(b.cfg.maxSize))
	}
	return nil
}

func (b *Bulk) sizesErr(size int64, chunk int32) error {
	if err := b.checkSizes(size, int(chunk)); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return nil
}

// Download streams the request's bytes as Chunk messages. When the call
// uses package bulkcodec's codec (grpc-tuned) each message is a
// bulkcodec.Message holding the stream's slice, which the codec hands to
// the transport without a copy; otherwise it is a protobuf Chunk
// marshalled by grpc-go's codec.
func (b *Bulk) Download(req *bulkpb.DownloadRequest, stream bulkpb.BulkService_DownloadServer) error {
	size, chunk := req.GetSizeBytes(), req.GetChunkBytes()
	if err := b.sizesErr(size, chunk); err != nil {
		return err
	}
	raw := false
	if md, ok := metadata.FromIncomingContext(stream.Context()); ok {
		for _, ct := range md.Get("content-type") {
			raw = raw || ct == "application/grpc+"+bulkcodec.Name
		}
	}
	var pm bulkpb.Chunk
	var rm bulkcodec.Message
	for off := int64(0); off < size; {
		n := int(min(int64(chunk), size-off))
		var err error
		if raw {
			// Borrow: the stream's bytes as a mem.Buffer with no allocation per message.
			rm.Data = append(rm.Data[:0], bulkcodec.Borrow(bulk.Stream(off, n)))
			err = stream.SendMsg(&rm)
			rm.Free() // this handler's reference; the transport holds its own until it has written the bytes
		} else {
			pm.Data = bulk.Stream(off, n)
			err = stream.Send(&pm)
		}
		if err != nil {
			return err
		}
		off += int64(n)
	}
	return nil
}

// SidechannelDownload takes the call's sidechannel (sidechannel.Server.Accept),
// writes the bytes there, closes it and answers with the count. Past
// WithMaxBulkConns transfers under way, or ids pending, it refuses with
// ResourceExhausted naming the cap.
func (b *Bulk) SidechannelDownload(ctx context.Context, req *bulkpb.DownloadRequest) (*bulkpb.SidechannelResult, error) {
	size, chunk := req.GetSizeBytes(), req.GetChunkBytes()
	if err := b.sizesErr(size, chunk); err != nil {
		return nil, err
	}
	srv := b.sc.Load()
	if srv == nil {
		return nil, status.Error(codes.FailedPrecondition, "server: this server serves no sidechannel (server.Serve splits its port for one)")
	}
	sc, err := srv.Accept(ctx)
	if errors.Is(err, sidechannel.ErrTooManyPending) {
		return nil, status.Errorf(codes.ResourceExhausted, "server: the sidechannel holds %d pending ids, its cap: try again when one is claimed or expires", b.cfg.maxConns)
	} else if err != nil {
		return nil, err // a status: no id, expired, reused, closed, the call's end
	}
	defer sc.Close()
	defer b.scActive.Add(-1)
	if b.scActive.Add(1) > int64(b.cfg.maxConns) {
		return nil, status.Errorf(codes.ResourceExhausted, "server: the sidechannel holds %d transfers, its cap: try again when one ends", b.cfg.maxConns)
	}
	sent, err := writeStream(sc, size, int(chunk))
	if err == nil {
		err = sc.Close() // the client reads EOF once every byte is out
	}
	if err != nil {
		return nil, sidechannel.StatusError(fmt.Errorf("server: sidechannel after %d of %d bytes: %w", sent, size, err))
	}
	return &bulkpb.SidechannelResult{BytesSent: sent}, nil
}

// Info answers with the listeners' addresses and the process's usage.
func (b *Bulk) Info(_ context.Context, req *bulkpb.InfoRequest) (*bulkpb.InfoResponse, error) {
	if req.GetResetPeakRss() {
		procstat.ResetPeakRSS()
	}
	u, err := procstat.ReadUsage()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &bulkpb.InfoResponse{
		GrpcTunedAddr: b.info.GrpcTunedAddr,
		TcpAddr:       b.info.TcpAddr,
		HttpAddr:      b.info.HttpAddr,
		Pid:           int64(os.Getpid()),
		CpuNs:         int64(u.CPU),
		AllocBytes:    u.AllocBytes,
		Allocs:        u.Allocs,
		PeakRssBytes:  u.PeakRSS,
		MaxChunkBytes: bulk.MaxChunk,
	}, nil
}

func writeStream(w io.Writer, size int64, chunk int) (int64, error) {
	var off int64
	for off < size {
		n, err := w.Write(bulk.Stream(off, int(min(int64(chunk), size-off))))
		off += int64(n)
		if err != nil {
			return off, err
		}
	}
	return off, nil
}

// serveTCP answers raw TCP download requests on c until the peer closes it.
func (b *Bulk) serveTCP(c net.Conn) {
	defer c.Close()
	for {
		_ = c.SetReadDeadline(time.Now().Add(b.cfg.readTimeout))
		size, chunk, err := bulk.ReadTCPRequest(c)
		if err == nil {
			err = b.checkSizes(size, chunk)
		}
		if err != nil {
			var ne net.Error
			if !errors.Is(err, io.EOF) && !errors.As(err, &ne) {
				writeRefusal(c, err.Error())
			}
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		if _, err := writeStream(c, size, chunk); err != nil {
			return
		}
	}
}

// serveHTTP answers GET /bulk?size=N&chunk=C with N bytes of the stream,
// written C bytes at a time (HTTP/1.1 or h2c).
func (b *Bulk) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if over, _ := r.Context().Value(overCapKey{}).(bool); over {
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("server: the bulk http listener holds %d connections, its cap: try again when one closes", b.cfg.maxConns), http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path != "/bulk" || r.Method != http.MethodGet {
		http.Error(w, "GET /bulk?size=N&chunk=C", http.StatusNotFound)
		return
	}
	size, err1 := strconv.ParseInt(r.URL.Query().Get("size"), 10, 64)
	chunk, err2 := strconv.Atoi(r.URL.Query().Get("chunk"))
	if err := errors.Join(err1, err2); err != nil {
		http.Error(w, "size and chunk must be integers: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := b.checkSizes(size, chunk); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	_, _ = writeStream(w, size, chunk)
}

// overCapKey is the context key of whether an HTTP request's connection is
// past the listener's cap.
type overCapKey struct{}
