// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/bulk"
	"github.com/rpclab/rpclab/internal/accept"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/proto/bulkpb"
	"github.com/rpclab/rpclab/result"
)

// wrapListener wraps each bulk listener StartBulk opens (tests replace it
// to inject Accept errors).
var wrapListener = func(l net.Listener) net.Listener { return l }

// SidechannelWait is how long a SidechannelDownload call waits for its
// connection's hello (and a hello for its call) before giving up.
const SidechannelWait = 10 * time.Second

// TunedOptions are the server settings of the grpc-tuned listener. It is
// empty on purpose: on the server the zero-copy codec (bulk.CodecName) is
// what cuts CPU; larger write buffers (64 KiB, 1 MiB), no write buffer,
// grpc.SharedWriteBuffer and larger windows were measured side by side and
// saved nothing or cost more (docs/bulk.md has the figures). grpc-tuned
// keeps its own listener so that the flags of "rpclab serve", which apply
// to the main server and so to the grpc transport, never change it.
func TunedOptions() []grpc.ServerOption {
	return nil
}

// Bulk serves rpclab.v1.BulkService: downloads of the deterministic stream
// of package bulk over gRPC, and the sidechannel download. StartBulk also
// serves the other transports (grpc-tuned, raw TCP, HTTP/1.1 and h2c, the
// sidechannel listener) and Info tells clients where they are.
type Bulk struct {
	bulkpb.UnimplementedBulkServiceServer

	info bulkpb.InfoResponse // addresses only; set before serving
	sc   registry
	cfg  bulkConfig

	closers   []func() // set up by StartBulk before it returns
	wg        sync.WaitGroup
	closeOnce sync.Once
	quit      chan struct{} // closed by Close

	mu       sync.Mutex
	conns    map[net.Conn]struct{} // open raw connections, closed by Close
	refusing int                   // raw connections being refused
	closed   bool
}

var _ bulkpb.BulkServiceServer = (*Bulk)(nil)

// NewBulk returns a Bulk without the extra listeners: Download and Info
// work, the other transports are absent.
// The options are StartBulk's; only the maximum size applies without the
// listeners.
func NewBulk(opts ...BulkOption) (*Bulk, error) {
	b := &Bulk{cfg: defaultBulkConfig(), quit: make(chan struct{})}
	for _, o := range opts {
		if err := o(&b.cfg); err != nil {
			return nil, err
		}
	}
	b.sc = registry{m: map[token]*slot{}, max: b.cfg.maxConns, clock: b.cfg.clock}
	return b, nil
}

// RegisterBulk registers b (a NewBulk when nil) on s.
func RegisterBulk(s *grpc.Server, b *Bulk) {
	if b == nil {
		b, _ = NewBulk() // no options, no error
	}
	bulkpb.RegisterBulkServiceServer(s, b)
}

// StartBulk starts the bulk listeners on host (port 0 each): a grpc-tuned
// gRPC server, raw TCP, HTTP (1.1 and h2c) and the sidechannel. They run
// until ctx ends or Close is called. Every transport refuses a request
// above the maximum size (WithMaxBulkSize); the raw TCP and HTTP listeners
// close a connection that stays silent (WithBulkReadTimeout); the raw and
// HTTP listeners cap how many connections are open (WithMaxBulkConns) and
// answer one past the cap with an error naming it (a bulk.RefusalMagic
// message, HTTP 503); the raw listeners keep accepting after an Accept
// error (package accept's backoff), as the HTTP one does.
func StartBulk(ctx context.Context, host string, opts ...BulkOption) (*Bulk, error) {
	b, err := NewBulk(opts...)
	if err != nil {
		return nil, err
	}
	var lis [4]net.Listener // grpc-tuned, tcp, http, sidechannel
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
	b.info.SidechannelAddr = lis[3].Addr().String()

	tuned := grpc.NewServer(TunedOptions()...)
	RegisterBulk(tuned, b)
	b.goServe(func() { _ = tuned.Serve(lis[0]) }, tuned.Stop)

	b.goServe(func() { b.acceptLoop(lis[1], b.serveTCP) }, func() { lis[1].Close() })

	// An idle keep-alive connection is closed after the read timeout, so
	// idle clients cannot hold every slot under the cap.
	hs := &http.Server{
		Handler:           http.HandlerFunc(b.serveHTTP),
		ReadHeaderTimeout: b.cfg.readTimeout,
		IdleTimeout:       b.cfg.readTimeout,
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
	}
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	hl := &httpLimit{Listener: lis[2], max: b.cfg.maxConns}
	b.goServe(func() { _ = hs.Serve(hl) }, func() { hs.Close() })

	b.goServe(func() { b.acceptLoop(lis[3], b.hello) }, func() { lis[3].Close() })

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
		b.mu.Lock()
		b.closed = true
		open := make([]net.Conn, 0, len(b.conns))
		for c := range b.conns {
			open = append(open, c)
		}
		b.mu.Unlock()
		for _, c := range open {
			c.Close()
		}
		b.wg.Wait()
	})
}

// acceptLoop serves a raw listener until it is closed. An Accept error
// other than the listener's closing is retried after a backoff; a
// connection past the cap (of the raw listeners together) gets a refusal
// naming it.
func (b *Bulk) acceptLoop(lis net.Listener, handle func(net.Conn)) {
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := accept.Next(lis, b.quit, nil)
		if err != nil {
			return
		}
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			c.Close()
			return
		}
		if b.conns == nil {
			b.conns = map[net.Conn]struct{}{}
		}
		if len(b.conns) >= b.cfg.maxConns { // refuse, not queue: a raw peer reads why
			refuse := b.refusing < maxRefusing
			if refuse {
				b.refusing++
			}
			b.mu.Unlock()
			if !refuse { // a flood: no word for each
				c.Close()
				continue
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				writeRefusal(c, fmt.Sprintf("server: the bulk tcp and sidechannel listeners hold %d connections together, their cap: try again when one closes", b.cfg.maxConns))
				b.mu.Lock()
				b.refusing--
				b.mu.Unlock()
			}()
			continue
		}
		tc := &trackedConn{Conn: c, b: b}
		b.conns[tc] = struct{}{}
		b.mu.Unlock()
		conns.Add(1)
		go func() {
			defer conns.Done()
			handle(tc)
		}()
	}
}

// trackedConn leaves Bulk's set of open connections when it is closed.
type trackedConn struct {
	net.Conn
	b    *Bulk
	once sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.b.mu.Lock()
		delete(t.b.conns, t)
		t.b.mu.Unlock()
	})
	return t.Conn.Close()
}

// checkSizes checks a request against bulk.CheckSizes and this server's
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
// uses the bulkraw codec (grpc-tuned) each message is a bulk.OutChunk that
// the codec hands to the transport without a copy; otherwise it is a
// protobuf Chunk marshalled by grpc-go's codec.
func (b *Bulk) Download(req *bulkpb.DownloadRequest, stream bulkpb.BulkService_DownloadServer) error {
	size, chunk := req.GetSizeBytes(), req.GetChunkBytes()
	if err := b.sizesErr(size, chunk); err != nil {
		return err
	}
	raw := false
	if md, ok := metadata.FromIncomingContext(stream.Context()); ok {
		for _, ct := range md.Get("content-type") {
			raw = raw || ct == "application/grpc+"+bulk.CodecName
		}
	}
	var pm bulkpb.Chunk
	var rm bulk.OutChunk
	for off := int64(0); off < size; {
		n := int(min(int64(chunk), size-off))
		var err error
		if raw {
			rm.Data = bulk.Stream(off, n)
			err = stream.SendMsg(&rm)
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

// SidechannelDownload pairs the call with its sidechannel connection by
// token, writes the bytes there, closes the connection and answers.
func (b *Bulk) SidechannelDownload(ctx context.Context, req *bulkpb.DownloadRequest) (*bulkpb.SidechannelResult, error) {
	size, chunk := req.GetSizeBytes(), req.GetChunkBytes()
	if err := b.sizesErr(size, chunk); err != nil {
		return nil, err
	}
	tok := req.GetSidechannelToken()
	if len(tok) != bulk.SidechannelTokenLen {
		return nil, status.Errorf(codes.InvalidArgument, "sidechannel_token has %d bytes, want %d", len(tok), bulk.SidechannelTokenLen)
	}
	c, err := b.sc.claim(ctx, token(tok))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	sent, err := writeStream(c, size, int(chunk))
	if err != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, status.Errorf(codes.Unavailable, "sidechannel write after %d of %d bytes: %v", sent, size, err)
	}
	if err := c.Close(); err != nil {
		return nil, status.Errorf(codes.Unavailable, "sidechannel close: %v", err)
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
		GrpcTunedAddr:   b.info.GrpcTunedAddr,
		TcpAddr:         b.info.TcpAddr,
		HttpAddr:        b.info.HttpAddr,
		SidechannelAddr: b.info.SidechannelAddr,
		Pid:             int64(os.Getpid()),
		CpuNs:           int64(u.CPU),
		AllocBytes:      u.AllocBytes,
		Allocs:          u.Allocs,
		PeakRssBytes:    u.PeakRSS,
		MaxChunkBytes:   bulk.MaxChunk,
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
	if oc, ok := r.Context().Value(connKey{}).(*overConn); ok {
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("server: the bulk http listener holds %d connections, its cap: try again when one closes", oc.max), http.StatusServiceUnavailable)
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

// hello reads a sidechannel hello and hands the connection to the call that
// presents the same token.
func (b *Bulk) hello(c net.Conn) {
	var h [bulk.SidechannelHelloLen]byte
	_ = c.SetReadDeadline(time.Now().Add(SidechannelWait))
	if _, err := io.ReadFull(c, h[:]); err != nil || string(h[:len(bulk.SidechannelMagic)]) != bulk.SidechannelMagic {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if err := b.sc.offer(token(h[len(bulk.SidechannelMagic):]), c); err != nil {
		writeRefusal(c, err.Error())
	}
}

// token is a sidechannel token.
type token = [bulk.SidechannelTokenLen]byte

// registry pairs sidechannel connections with calls by token. Whichever
// arrives first creates the slot; a slot nobody claims expires after twice
// SidechannelWait and its connection is closed. It holds at most max slots
// (WithMaxBulkConns: the sidechannel listener holds no more connections,
// so no more calls could be paired at once); a call or a connection past
// it is refused (ResourceExhausted) rather than queued.
type registry struct {
	clock clock
	max   int

	mu sync.Mutex
	m  map[token]*slot
}

type slot struct {
	ch     chan net.Conn
	expire func() bool // stops the expiry
}

// slot returns the slot of tok, made if it is new and there is room.
func (r *registry) slot(tok token) (*slot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sl := r.m[tok]; sl != nil {
		return sl, nil
	}
	if len(r.m) >= r.max {
		return nil, status.Errorf(codes.ResourceExhausted, "server: the sidechannel holds %d pending tokens, its cap: try again when one is claimed or expires", r.max)
	}
	sl := &slot{ch: make(chan net.Conn, 1)}
	r.m[tok] = sl
	sl.expire = r.clock.afterFunc(2*SidechannelWait, func() {
		r.remove(tok, sl)
		select {
		case c := <-sl.ch:
			c.Close()
		default:
		}
	})
	return sl, nil
}

func (r *registry) remove(tok token, sl *slot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[tok] == sl {
		delete(r.m, tok)
		sl.expire()
		if len(r.m) == 0 {
			// A map never shrinks: give back what a burst of tokens took.
			r.m = map[token]*slot{}
		}
	}
}

// pending is the number of slots.
func (r *registry) pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}

// offer hands c to the slot of tok; an error if the slot already has one
// or there is no room for it.
func (r *registry) offer(tok token, c net.Conn) error {
	sl, err := r.slot(tok)
	if err != nil {
		return err
	}
	select {
	case sl.ch <- c:
		return nil
	default:
		return fmt.Errorf("server: sidechannel token %x was presented twice", tok)
	}
}

// claim waits for the connection of tok.
func (r *registry) claim(ctx context.Context, tok token) (net.Conn, error) {
	sl, err := r.slot(tok)
	if err != nil {
		return nil, err
	}
	defer r.remove(tok, sl)
	timeout := make(chan struct{})
	stop := r.clock.afterFunc(SidechannelWait, func() { close(timeout) })
	defer stop()
	select {
	case c := <-sl.ch:
		return c, nil
	case <-timeout:
		return nil, status.Errorf(codes.FailedPrecondition, "no sidechannel connection presented token %x within %v", tok, SidechannelWait)
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

// clock starts timers (tests replace it).
type clock interface {
	afterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) afterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// maxRefusing bounds the connections past the cap a listener answers with
// a refusal at once (each for at most refusalWait); past it, one is closed
// unanswered.
const maxRefusing = 64

// refusalWait bounds how long a refused raw connection is kept to read
// what its peer sent: closing it unread would reset it, and a reset may
// discard the refusal before the peer reads it.
const refusalWait = time.Second

// writeRefusal writes a bulk.RefusalMagic message on c, half-closes it,
// reads what the peer sent (at most refusalWait) and closes it.
func writeRefusal(c net.Conn, msg string) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refusalWait))
	if _, err := c.Write(bulk.EncodeRefusal(msg)); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else if tc, ok := c.(*trackedConn); ok {
		if cw, ok := tc.Conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

// connKey is the context key of the HTTP request's connection.
type connKey struct{}

// httpLimit caps the HTTP listener's open connections: past the cap, up to
// maxRefusing more are accepted as overConns, answered 503 and closed
// within refusalWait; past that, closed unanswered.
type httpLimit struct {
	net.Listener
	max int

	mu         sync.Mutex
	open, over int
}

func (l *httpLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err // http.Server backs off and retries
		}
		l.mu.Lock()
		switch {
		case l.open < l.max:
			l.open++
			l.mu.Unlock()
			return &countedConn{Conn: c, n: &l.open, mu: &l.mu}, nil
		case l.over < maxRefusing:
			l.over++
			l.mu.Unlock()
			_ = c.SetDeadline(time.Now().Add(refusalWait))
			return &overConn{countedConn: countedConn{Conn: c, n: &l.over, mu: &l.mu}, max: l.max}, nil
		}
		l.mu.Unlock()
		c.Close()
	}
}

// countedConn leaves its count when closed.
type countedConn struct {
	net.Conn
	mu   *sync.Mutex
	n    *int
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		*c.n--
		c.mu.Unlock()
	})
	return c.Conn.Close()
}

// overConn is an HTTP connection past the cap.
type overConn struct {
	countedConn
	max int
}
