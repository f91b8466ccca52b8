// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package flow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/server"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// servers are the study's servers on loopback: rpclab's ping service with
// grpc-go's defaults and with fixed windows, and one HTTP server for
// HTTP/1.1 and h2c that reads each POST body to the end.
type servers struct {
	dynamic, fixed *grpc.Server
	httpSrv        *http.Server
	lis            map[string]net.Listener
}

func startServers(s *Spec, maxPayload int64) (*servers, error) {
	msg := grpc.MaxRecvMsgSize(int(maxPayload) + 1<<10)
	srv := &servers{
		dynamic: server.New(server.Options{}, msg),
		// The Static options say what grpc-fixed means: these windows, BDP
		// estimation off. In grpc-go v1.85.0 InitialWindowSize and
		// InitialConnWindowSize turn it off too (both set
		// staticWindowSize); the Static ones keep doing so by name.
		fixed: server.New(server.Options{}, msg,
			grpc.StaticStreamWindowSize(s.FixedWindow), grpc.StaticConnWindowSize(s.FixedWindow)),
		lis: map[string]net.Listener{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	// HTTP/1.1 and h2c (HTTP/2 with prior knowledge) on one port.
	srv.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
	srv.httpSrv.Protocols.SetHTTP1(true)
	srv.httpSrv.Protocols.SetUnencryptedHTTP2(true)
	for _, t := range []string{GRPCDynamic, GRPCFixed, HTTP1} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			srv.close()
			return nil, fmt.Errorf("flow: %w", err)
		}
		srv.lis[t] = l
	}
	go srv.dynamic.Serve(srv.lis[GRPCDynamic])
	go srv.fixed.Serve(srv.lis[GRPCFixed])
	go srv.httpSrv.Serve(srv.lis[HTTP1])
	return srv, nil
}

// addr is the server a transport talks to (h2c and HTTP/1.1 share one).
func (s *servers) addr(transport string) string {
	if transport == H2C {
		transport = HTTP1
	}
	return s.lis[transport].Addr().String()
}

func (s *servers) close() {
	s.dynamic.Stop()
	s.fixed.Stop()
	s.httpSrv.Close()
	for _, l := range s.lis {
		l.Close()
	}
}

// client sends one request of a payload and waits for the empty reply.
type client interface {
	call(ctx context.Context, payload []byte) error
	close()
}

func dial(ctx context.Context, transport, addr string, s *Spec) (client, error) {
	switch transport {
	case GRPCDynamic, GRPCFixed:
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		if transport == GRPCFixed {
			opts = append(opts, grpc.WithStaticStreamWindowSize(s.FixedWindow), grpc.WithStaticConnWindowSize(s.FixedWindow))
		}
		cc, err := grpc.NewClient(addr, opts...)
		if err != nil {
			return nil, err
		}
		cc.Connect()
		for st := cc.GetState(); st != connectivity.Ready; st = cc.GetState() {
			if !cc.WaitForStateChange(ctx, st) {
				cc.Close()
				return nil, fmt.Errorf("%s not ready: %w", addr, ctx.Err())
			}
		}
		return &grpcClient{cc: cc, c: pb.NewBenchmarkServiceClient(cc)}, nil
	case H2C:
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true, Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		return &httpClient{c: &http.Client{Transport: tr}, url: "http://" + addr + "/upload", closeFn: tr.CloseIdleConnections, proto: 2}, nil
	case HTTP1:
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(true)
		return &httpClient{c: &http.Client{Transport: tr}, url: "http://" + addr + "/upload", closeFn: tr.CloseIdleConnections, proto: 1}, nil
	}
	return nil, fmt.Errorf("unknown transport %q", transport)
}

type grpcClient struct {
	cc  *grpc.ClientConn
	c   pb.BenchmarkServiceClient
	req pb.SimpleRequest
}

func (g *grpcClient) call(ctx context.Context, payload []byte) error {
	g.req.Payload = &pb.Payload{Body: payload}
	_, err := g.c.UnaryCall(ctx, &g.req)
	return err
}

func (g *grpcClient) close() { g.cc.Close() }

type httpClient struct {
	c       *http.Client
	url     string
	closeFn func()
	// proto is the HTTP major version the transport must have spoken:
	// a silent fall back to HTTP/1.1 would time the wrong protocol.
	proto int
}

func (h *httpClient) call(ctx context.Context, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.ContentLength = int64(len(payload))
	resp, err := h.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	if resp.ProtoMajor != h.proto {
		return fmt.Errorf("spoke %s, want HTTP/%d", resp.Proto, h.proto)
	}
	return nil
}

func (h *httpClient) close() { h.closeFn() }
