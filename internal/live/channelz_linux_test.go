// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	channelzpb "google.golang.org/grpc/channelz/grpc_channelz_v1"
	channelzsvc "google.golang.org/grpc/channelz/service"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
)

// TestChannelzWindow: this process's channelz lists the channel dialled
// to a server, its subchannel and its socket to the server's address,
// with the calls of the window.
func TestChannelzWindow(t *testing.T) {
	ctx := testutil.Context(t)
	addr, _ := testserver.CountingPing(t)
	cz := grpc.NewServer()
	channelzsvc.RegisterChannelzServiceToServer(cz)
	czAddr := testutil.Serve(t, cz)
	dialN(t, addr, 1)
	s, err := Open(ctx, os.Getpid(), Options{Channelz: czAddr, ChannelzTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dialN(t, addr, 1)
	if err := s.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	r := s.Record(result.StatusOK)
	if err := result.Check(r); err != nil {
		t.Fatal(err)
	}
	socks := 0
	for _, k := range r.Channelz.Sockets {
		if k.Remote == addr {
			socks++
		}
	}
	calls := int64(0)
	for _, ch := range r.Channelz.Channels {
		calls += ch.CallsSucceeded
	}
	if socks != 2 || calls < 1 || len(r.Samples) != 1 || len(r.Samples[0].Streams) == 0 {
		t.Errorf("channelz: %d sockets to %s, %d calls, samples %+v; want 2 sockets, the window's call", socks, addr, calls, r.Samples)
	}
}

// TestChannelzNotChannelz: a gRPC port without the channelz service is
// refused, saying so.
func TestChannelzNotChannelz(t *testing.T) {
	addr, _ := testserver.CountingPing(t)
	_, err := Open(testutil.Context(t), os.Getpid(), Options{Channelz: addr})
	if !errors.Is(err, ErrChannelz) || !strings.Contains(err.Error(), "does not serve channelz") {
		t.Fatalf("got %v, want ErrChannelz saying it does not serve channelz", err)
	}
}

// TestChannelzHangs: a port that accepts and never answers is refused
// after the read's timeout.
func TestChannelzHangs(t *testing.T) {
	lis := testutil.Listen(t)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	start := time.Now()
	_, err := Open(testutil.Context(t), os.Getpid(), Options{Channelz: lis.Addr().String(), ChannelzTimeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrChannelz) || !strings.Contains(err.Error(), "no channelz answer within 300ms") {
		t.Fatalf("got %v, want ErrChannelz naming the timeout", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("refused after %v, before the timeout", d)
	}
}

// hugeChannelz lists one channel whose one subchannel has 100,000
// sockets.
type hugeChannelz struct {
	channelzpb.UnimplementedChannelzServer
}

func (hugeChannelz) GetTopChannels(context.Context, *channelzpb.GetTopChannelsRequest) (*channelzpb.GetTopChannelsResponse, error) {
	return &channelzpb.GetTopChannelsResponse{End: true, Channel: []*channelzpb.Channel{{
		Ref: &channelzpb.ChannelRef{ChannelId: 1}, Data: &channelzpb.ChannelData{Target: "x"},
		SubchannelRef: []*channelzpb.SubchannelRef{{SubchannelId: 2}},
	}}}, nil
}

func (hugeChannelz) GetSubchannel(context.Context, *channelzpb.GetSubchannelRequest) (*channelzpb.GetSubchannelResponse, error) {
	refs := make([]*channelzpb.SocketRef, 100000)
	for i := range refs {
		refs[i] = &channelzpb.SocketRef{SocketId: int64(i + 10)}
	}
	return &channelzpb.GetSubchannelResponse{Subchannel: &channelzpb.Subchannel{Ref: &channelzpb.SubchannelRef{SubchannelId: 2}, SocketRef: refs}}, nil
}

// TestChannelzHuge: a service listing 100,000 sockets is refused at the
// bound, before any of them is read.
func TestChannelzHuge(t *testing.T) {
	s := grpc.NewServer()
	channelzpb.RegisterChannelzServer(s, hugeChannelz{})
	addr := testutil.Serve(t, s)
	// The reply of 100,000 references takes a while to build under -race
	// on a busy host: the bound, not the time, must refuse it.
	_, err := Open(testutil.Context(t), os.Getpid(), Options{Channelz: addr, ChannelzTimeout: time.Minute})
	if !errors.Is(err, ErrChannelz) || !strings.Contains(err.Error(), "more than 10000 sockets") {
		t.Fatalf("got %v, want ErrChannelz naming the bound", err)
	}
}

// TestChannelzClosedPort: nothing listening is a channelz error.
func TestChannelzClosedPort(t *testing.T) {
	_, err := Open(testutil.Context(t), os.Getpid(), Options{Channelz: testutil.ClosedAddr(t), ChannelzTimeout: 500 * time.Millisecond})
	if !errors.Is(err, ErrChannelz) {
		t.Fatalf("got %v, want ErrChannelz", err)
	}
}

// TestFindChannelz: with no address given, the process's listening ports
// are asked and the one serving channelz is read, past a gRPC port
// without it and a port that accepts and never answers; without
// FindChannelz none is asked.
func TestFindChannelz(t *testing.T) {
	ctx := testutil.Context(t)
	addr, _ := testserver.CountingPing(t)
	silent := testutil.Listen(t)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	cz := grpc.NewServer()
	channelzsvc.RegisterChannelzServiceToServer(cz)
	czAddr := testutil.Serve(t, cz)
	dialN(t, addr, 1)
	s, err := Open(ctx, os.Getpid(), Options{FindChannelz: true, ChannelzTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	r := s.Record(result.StatusOK)
	if err := result.Check(r); err != nil {
		t.Fatal(err)
	}
	if r.Channelz == nil || !r.Channelz.Found || r.Channelz.Addr != czAddr || len(r.Channelz.Channels) == 0 {
		t.Fatalf("channelz found: %+v; want %s's, with the dialled channel", r.Channelz, czAddr)
	}
	off, err := Open(ctx, os.Getpid(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if c := off.Record(result.StatusOK).Channelz; c != nil {
		t.Errorf("channelz without FindChannelz or an address: %+v", c)
	}
}
