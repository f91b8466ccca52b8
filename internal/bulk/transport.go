// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/bulkcodec"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/proto/bulkpb"
	"github.com/rpclab/rpclab/sidechannel"
)

// Transport names, as --transport spells them: result's, whose schema
// lists them.
const (
	GRPC        = result.BulkGRPC
	GRPCTuned   = result.BulkGRPCTuned
	TCP         = result.BulkTCP
	HTTP1       = result.BulkHTTP1
	HTTP2       = result.BulkHTTP2
	Sidechannel = result.BulkSidechannel
)

// Transports lists every transport in the order reports show them
// (result.BulkTransports).
var Transports = result.BulkTransports

// usesGRPCMessages reports whether the transport carries the bytes in gRPC
// messages, so chunks are bounded by the max receive message size.
func usesGRPCMessages(t string) bool { return t == GRPC || t == GRPCTuned }

// DefaultMaxMessage is grpc-go's default max receive message size (4 MiB).
const DefaultMaxMessage = 4 << 20

// ChunkMessageSize is the size of the rpclab.v1.Chunk message that carries
// chunk bytes: the field's tag and length, then the bytes.
func ChunkMessageSize(chunk int) int {
	n := 1 + 1
	for v := uint64(chunk); v >= 0x80; v >>= 7 {
		n++
	}
	return n + chunk
}

// TunedDialOptions are the client settings of the grpc-tuned transport:
// package bulkcodec's (its zero-copy codec on every call and a 1 MiB read
// buffer, the settings that measured a gain; docs/bulk.md lists those
// tried and left out) and the run's max receive message size.
func TunedDialOptions(maxMsg int) []grpc.DialOption {
	return append(bulkcodec.DialOptions(), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsg)))
}

// endpoints are where the transports of one server listen, and how to
// reach them.
type endpoints struct {
	target               string // the main gRPC server, and the sidechannel's port
	grpcTuned, tcp, http string
	tls                  *tls.Config // every transport's (nil: plaintext); ServerName set
}

// transportCreds are gRPC's credentials for cfg: TLS, or plaintext when nil.
func transportCreds(cfg *tls.Config) credentials.TransportCredentials {
	if cfg == nil {
		return insecure.NewCredentials()
	}
	return credentials.NewTLS(cfg)
}

// overTLS says " over TLS" when cfg is set, for errors.
func overTLS(cfg *tls.Config) string {
	if cfg == nil {
		return ""
	}
	return " over TLS"
}

// downloader fetches downloads over one connection (a gRPC channel, a TCP
// connection, an HTTP client with one connection).
type downloader interface {
	download(ctx context.Context, size int64, chunk int, v *verifier) error
	close() error
}

func dial(transport string, ep endpoints, maxMsg int) (downloader, error) {
	need := func(addr, what string) error {
		if addr == "" {
			return fmt.Errorf("the server has no %s listener (BulkService.Info gave none)", what)
		}
		return nil
	}
	switch transport {
	case GRPC:
		cc, err := grpc.NewClient(ep.target, grpc.WithTransportCredentials(transportCreds(ep.tls)),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsg)))
		if err != nil {
			return nil, err
		}
		return &grpcDownloader{cc: cc, c: bulkpb.NewBulkServiceClient(cc)}, nil
	case GRPCTuned:
		if err := need(ep.grpcTuned, "grpc-tuned"); err != nil {
			return nil, err
		}
		opts := append([]grpc.DialOption{grpc.WithTransportCredentials(transportCreds(ep.tls))}, TunedDialOptions(maxMsg)...)
		cc, err := grpc.NewClient(ep.grpcTuned, opts...)
		if err != nil {
			return nil, err
		}
		return &grpcDownloader{cc: cc, c: bulkpb.NewBulkServiceClient(cc), raw: true}, nil
	case TCP:
		if err := need(ep.tcp, "tcp"); err != nil {
			return nil, err
		}
		return &tcpDownloader{addr: ep.tcp, tls: ep.tls}, nil
	case HTTP1, HTTP2:
		if err := need(ep.http, "http"); err != nil {
			return nil, err
		}
		tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1, Protocols: new(http.Protocols),
			ResponseHeaderTimeout: stallTimeout, DialContext: (&net.Dialer{Timeout: stallTimeout}).DialContext,
			TLSClientConfig: ep.tls, TLSHandshakeTimeout: stallTimeout}
		scheme := "http://"
		switch {
		case transport == HTTP1:
			tr.Protocols.SetHTTP1(true)
		case ep.tls != nil:
			tr.Protocols.SetHTTP2(true) // h2 by ALPN
		default:
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
		if ep.tls != nil {
			scheme = "https://"
		}
		return &httpDownloader{c: &http.Client{Transport: tr}, url: scheme + ep.http + "/bulk", proto: transport}, nil
	case Sidechannel:
		cc, err := grpc.NewClient(ep.target, grpc.WithTransportCredentials(transportCreds(ep.tls)))
		if err != nil {
			return nil, err
		}
		sc, err := sidechannel.NewClient(ep.target, sidechannel.WithDialer((&net.Dialer{Timeout: stallTimeout}).DialContext),
			sidechannel.WithTLS(ep.tls))
		if err != nil {
			cc.Close()
			return nil, err
		}
		return &sidechannelDownloader{cc: cc, c: bulkpb.NewBulkServiceClient(cc), sc: sc}, nil
	}
	return nil, fmt.Errorf("unknown transport %q", transport)
}

// grpcDownloader runs BulkService.Download: with grpc-go's defaults (each
// message unmarshalled into a new Chunk) or, raw, with package bulkcodec's
// codec (each message's payload left in the transport's buffers).
type grpcDownloader struct {
	cc  *grpc.ClientConn
	c   bulkpb.BulkServiceClient
	raw bool
}

func (d *grpcDownloader) download(ctx context.Context, size int64, chunk int, v *verifier) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := d.c.Download(ctx, &bulkpb.DownloadRequest{SizeBytes: size, ChunkBytes: int32(chunk)})
	if err != nil {
		return err
	}
	if d.raw {
		var m bulkcodec.Message
		defer m.Free()
		for {
			if err := st.RecvMsg(&m); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			_, _ = m.WriteTo(v) // frees m's buffers; a verifier never fails
		}
	}
	for {
		m, err := st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		v.write(m.GetData())
	}
}

func (d *grpcDownloader) close() error { return d.cc.Close() }

// tcpDownloader sends a 16-byte request on a kept-open TCP connection
// (inside crypto/tls when tls is set) and reads exactly size bytes back,
// chunk bytes per read at most.
type tcpDownloader struct {
	addr string
	tls  *tls.Config
	conn net.Conn
	buf  []byte
}

func (d *tcpDownloader) download(ctx context.Context, size int64, chunk int, v *verifier) error {
	if d.conn == nil {
		dl := &net.Dialer{Timeout: stallTimeout}
		var c net.Conn
		var err error
		if d.tls != nil {
			c, err = (&tls.Dialer{NetDialer: dl, Config: d.tls}).DialContext(ctx, "tcp", d.addr)
		} else {
			c, err = dl.DialContext(ctx, "tcp", d.addr)
		}
		if err != nil {
			return err
		}
		d.conn = c
	}
	conn := d.conn // fail clears d.conn, maybe before the AfterFunc runs
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var req [TCPRequestLen]byte
	EncodeTCPRequest(&req, size, chunk)
	if _, err := d.conn.Write(req[:]); err != nil {
		return d.fail(ctx, err)
	}
	if len(d.buf) < chunk {
		d.buf = make([]byte, chunk)
	}
	var s stall
	for v.n < size {
		s.arm(d.conn)
		n, err := d.conn.Read(d.buf[:min(int64(chunk), size-v.n)])
		if v.n == 0 && n > 0 {
			if rerr := refusal(d.buf[:n], d.conn); rerr != nil {
				return d.fail(ctx, rerr)
			}
		}
		v.write(d.buf[:n])
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("connection closed by the server")
			}
			return d.fail(ctx, s.explain(err))
		}
	}
	return nil
}

// stallTimeout is how long a raw transport (tcp, sidechannel) waits for the
// server's next byte, or for its connection, before it gives up: a server
// that stopped serving (its accept loop gone, the process frozen) must not
// hang a run. A live server sends its next chunk within milliseconds.
var stallTimeout = 30 * time.Second

// stall keeps a read deadline stallTimeout ahead of the last read, moving
// it only every quarter of stallTimeout so reads do not pay for it.
type stall struct{ armed time.Time }

func (s *stall) arm(c net.Conn) {
	if now := time.Now(); now.Sub(s.armed) > stallTimeout/4 {
		_ = c.SetReadDeadline(now.Add(stallTimeout))
		s.armed = now
	}
}

// explain names a read deadline's expiry as the server's stall.
func (s *stall) explain(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("the server sent nothing for %v (stalled): %w", stallTimeout, err)
	}
	return err
}

func (d *tcpDownloader) fail(ctx context.Context, err error) error {
	d.conn.Close()
	d.conn = nil
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (d *tcpDownloader) close() error {
	if d.conn == nil {
		return nil
	}
	return d.conn.Close()
}

// httpDownloader GETs /bulk over HTTP/1.1 or h2c (HTTP/1.1 or h2 over TLS)
// with one connection.
type httpDownloader struct {
	c     *http.Client
	url   string
	proto string
	buf   []byte
}

func (d *httpDownloader) download(ctx context.Context, size int64, chunk int, v *verifier) error {
	url := d.url + "?size=" + strconv.FormatInt(size, 10) + "&chunk=" + strconv.Itoa(chunk)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := d.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("HTTP %s: %s", resp.Status, b)
	}
	if want := map[string]int{HTTP1: 1, HTTP2: 2}[d.proto]; resp.ProtoMajor != want {
		return fmt.Errorf("the server answered over %s, want HTTP/%d", resp.Proto, want)
	}
	if len(d.buf) < chunk {
		d.buf = make([]byte, chunk)
	}
	for {
		n, err := resp.Body.Read(d.buf[:chunk])
		v.write(d.buf[:n])
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (d *httpDownloader) close() error {
	d.c.CloseIdleConnections()
	return nil
}

// sidechannelDownloader: per download, a sidechannel (package
// sidechannel: a new plain connection to the main gRPC port, the id in
// the call's metadata) and a SidechannelDownload call on the kept gRPC
// channel. The bytes come over the sidechannel; the call brings the
// status and the count of bytes sent.
type sidechannelDownloader struct {
	cc  *grpc.ClientConn
	c   bulkpb.BulkServiceClient
	sc  *sidechannel.Client
	buf []byte
}

func (d *sidechannelDownloader) download(ctx context.Context, size int64, chunk int, v *verifier) error {
	if len(d.buf) < chunk {
		d.buf = make([]byte, chunk)
	}
	var res *bulkpb.SidechannelResult
	var rerr error // the read's own error, kept apart from the call's
	err := d.sc.Do(ctx, func(ctx context.Context) error {
		var err error
		res, err = d.c.SidechannelDownload(ctx, &bulkpb.DownloadRequest{SizeBytes: size, ChunkBytes: int32(chunk)})
		return err
	}, func(sc *sidechannel.Conn) error {
		// A sidechannel has no read deadline of its own to move (its
		// socket's is the call's): a timer closes it when the server
		// sends nothing for stallTimeout.
		var stalled atomic.Bool
		t := time.AfterFunc(stallTimeout, func() { stalled.Store(true); sc.Close() })
		defer t.Stop()
		armed := time.Now()
		for {
			n, err := sc.Read(d.buf[:chunk])
			v.write(d.buf[:n])
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				if stalled.Load() {
					err = fmt.Errorf("the server sent nothing for %v (stalled): %w", stallTimeout, err)
				}
				rerr = fmt.Errorf("sidechannel read: %w", err)
				return rerr
			}
			if now := time.Now(); now.Sub(armed) > stallTimeout/4 {
				t.Reset(stallTimeout)
				armed = now
			}
		}
	})
	switch {
	case rerr != nil && status.Code(err) == codes.Canceled:
		return rerr // the call was cancelled for it
	case err != nil:
		return err
	case res.GetBytesSent() != v.n:
		return fmt.Errorf("the call says %d bytes were sent, the sidechannel brought %d", res.GetBytesSent(), v.n)
	}
	return nil
}

func (d *sidechannelDownloader) close() error { return d.cc.Close() }
