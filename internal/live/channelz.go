// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc"
	channelzpb "google.golang.org/grpc/channelz/grpc_channelz_v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/result"
)

// Bounds of one channelz read: a service that lists more is refused with
// ErrChannelz naming the bound, so a read costs bounded time and memory.
const (
	MaxChannelzChannels    = 1000
	MaxChannelzSubchannels = 4000
	MaxChannelzSockets     = 10000
	// maxChannelzMsg bounds one reply.
	maxChannelzMsg = 4 << 20
	channelzPage   = 100
)

// channelzClient reads a process's channelz service.
type channelzClient struct {
	addr    string
	conn    *grpc.ClientConn
	cl      channelzpb.ChannelzClient
	timeout time.Duration
}

func dialChannelz(_ context.Context, addr string, timeout time.Duration) (*channelzClient, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxChannelzMsg)))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrChannelz, addr, err)
	}
	return &channelzClient{addr: addr, conn: conn, cl: channelzpb.NewChannelzClient(conn), timeout: timeout}, nil
}

func (c *channelzClient) close() { c.conn.Close() }

// czSnapshot is one read of channelz's client side.
type czSnapshot struct {
	channels    []czChannel
	subchannels map[int64]czSub
	sockets     map[int64]czSocket
}

type czChannel struct {
	id                         int64
	target                     string
	started, succeeded, failed int64
	subchannels                []int64
}

type czSub struct {
	target  string
	sockets []int64
}

type czSocket struct {
	local, remote              string
	started, succeeded, failed int64
	peerMax                    int64
}

// read lists the top channels, their subchannels and those's sockets,
// within c.timeout and the bounds.
func (c *channelzClient) read(ctx context.Context) (*czSnapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	snap := &czSnapshot{subchannels: map[int64]czSub{}, sockets: map[int64]czSocket{}}
	start := int64(0)
	for {
		resp, err := c.cl.GetTopChannels(ctx, &channelzpb.GetTopChannelsRequest{StartChannelId: start, MaxResults: channelzPage})
		if err != nil {
			return nil, c.fail(err)
		}
		for _, ch := range resp.GetChannel() {
			id := ch.GetRef().GetChannelId()
			d := ch.GetData()
			cc := czChannel{id: id, target: d.GetTarget(), started: d.GetCallsStarted(), succeeded: d.GetCallsSucceeded(), failed: d.GetCallsFailed()}
			for _, s := range ch.GetSubchannelRef() {
				cc.subchannels = append(cc.subchannels, s.GetSubchannelId())
			}
			snap.channels = append(snap.channels, cc)
			start = max(start, id+1)
		}
		if len(snap.channels) > MaxChannelzChannels {
			return nil, fmt.Errorf("%w: %s lists more than %d channels: rpclab reads at most that many", ErrChannelz, c.addr, MaxChannelzChannels)
		}
		if resp.GetEnd() || len(resp.GetChannel()) == 0 {
			break
		}
	}
	for _, ch := range snap.channels {
		for _, id := range ch.subchannels {
			if err := c.readSub(ctx, snap, id); err != nil {
				return nil, err
			}
		}
	}
	return snap, nil
}

// readSub reads one subchannel (once, however many channels list it) and
// its sockets.
func (c *channelzClient) readSub(ctx context.Context, snap *czSnapshot, id int64) error {
	if _, ok := snap.subchannels[id]; ok {
		return nil
	}
	if len(snap.subchannels) >= MaxChannelzSubchannels {
		return fmt.Errorf("%w: %s lists more than %d subchannels: rpclab reads at most that many", ErrChannelz, c.addr, MaxChannelzSubchannels)
	}
	resp, err := c.cl.GetSubchannel(ctx, &channelzpb.GetSubchannelRequest{SubchannelId: id})
	if err != nil {
		return c.fail(err)
	}
	sc := resp.GetSubchannel()
	sub := czSub{target: sc.GetData().GetTarget()}
	refs := sc.GetSocketRef()
	if len(snap.sockets)+len(refs) > MaxChannelzSockets {
		return fmt.Errorf("%w: %s lists more than %d sockets: rpclab reads at most that many", ErrChannelz, c.addr, MaxChannelzSockets)
	}
	for _, r := range refs {
		sid := r.GetSocketId()
		sub.sockets = append(sub.sockets, sid)
		resp, err := c.cl.GetSocket(ctx, &channelzpb.GetSocketRequest{SocketId: sid, Summary: true})
		if err != nil {
			if status.Code(err) == codes.NotFound {
				continue // closed since the subchannel listed it
			}
			return c.fail(err)
		}
		s := resp.GetSocket()
		d := s.GetData()
		snap.sockets[sid] = czSocket{
			local: addrOf(s.GetLocal()), remote: addrOf(s.GetRemote()),
			started: d.GetStreamsStarted(), succeeded: d.GetStreamsSucceeded(), failed: d.GetStreamsFailed(),
			peerMax: int64(d.GetPeerMaxConcurrentStreams()),
		}
	}
	snap.subchannels[id] = sub
	return nil
}

// fail words a failed channelz call.
func (c *channelzClient) fail(err error) error {
	switch {
	case status.Code(err) == codes.Unimplemented:
		return fmt.Errorf("%w: %s does not serve channelz (grpc.channelz.v1.Channelz is unimplemented there): give the port the process registers channelz on", ErrChannelz, c.addr)
	case status.Code(err) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %s gave no channelz answer within %v", ErrChannelz, c.addr, c.timeout)
	case status.Code(err) == codes.ResourceExhausted:
		return fmt.Errorf("%w: %s sent a reply above %d bytes: rpclab reads at most that", ErrChannelz, c.addr, maxChannelzMsg)
	}
	return fmt.Errorf("%w: %s: %w", ErrChannelz, c.addr, err)
}

// addrOf formats a channelz address as the kernel's are (host:port, an
// IPv4-mapped IPv6 address as IPv4), so that the two can be matched.
func addrOf(a *channelzpb.Address) string {
	t := a.GetTcpipAddress()
	if t == nil {
		return ""
	}
	port := uint16(t.GetPort())
	ip, ok := netip.AddrFromSlice(t.GetIpAddress())
	if !ok {
		return net.JoinHostPort(net.IP(t.GetIpAddress()).String(), strconv.Itoa(int(port)))
	}
	return netip.AddrPortFrom(ip.Unmap(), port).String()
}

// czWindow accumulates channelz reads over a window.
type czWindow struct {
	addr         string
	found        bool // addr is a listening port of the process that answered
	err          string
	first        map[int64]czChannel
	last         []czChannel
	subs         map[int64]czSub
	firstSockets map[int64]czSocket
	sockets      map[int64]*result.LiveChannelzSocket
	sockOrder    []int64
	// inflight holds each channel's calls in flight over the reads.
	inflight map[int64]*result.LiveChannel
}

// add folds one read in and returns its streams in flight per socket.
func (w *czWindow) add(s *czSnapshot) []result.LiveStreams {
	if w.first == nil {
		w.first, w.firstSockets, w.sockets = map[int64]czChannel{}, map[int64]czSocket{}, map[int64]*result.LiveChannelzSocket{}
	}
	if w.inflight == nil {
		w.inflight = map[int64]*result.LiveChannel{}
	}
	for _, ch := range s.channels {
		if _, ok := w.first[ch.id]; !ok {
			w.first[ch.id] = ch
		}
		c := w.inflight[ch.id]
		if c == nil {
			if len(w.inflight) >= MaxChannelzChannels {
				continue
			}
			c = &result.LiveChannel{}
			w.inflight[ch.id] = c
		}
		in := max(ch.started-ch.succeeded-ch.failed, 0)
		c.Samples++
		c.InFlightSum += in
		c.InFlightMax = max(c.InFlightMax, in)
	}
	w.last, w.subs = s.channels, s.subchannels
	var out []result.LiveStreams
	ids := make([]int64, 0, len(s.sockets))
	for id := range s.sockets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		k := s.sockets[id]
		f, ok := w.firstSockets[id]
		if !ok {
			f = k
			w.firstSockets[id] = k
		}
		ls := w.sockets[id]
		if ls == nil {
			if len(w.sockets) >= MaxChannelzSockets {
				continue
			}
			ls = &result.LiveChannelzSocket{ID: id}
			w.sockets[id] = ls
			w.sockOrder = append(w.sockOrder, id)
		}
		ls.Local, ls.Remote, ls.PeerMaxStreams = k.local, k.remote, k.peerMax
		ls.StreamsStarted, ls.StreamsSucceeded, ls.StreamsFailed = k.started-f.started, k.succeeded-f.succeeded, k.failed-f.failed
		in := max(k.started-k.succeeded-k.failed, 0)
		ls.Samples++
		ls.InFlightSum += in
		ls.InFlightMax = max(ls.InFlightMax, in)
		if k.peerMax > 0 && in >= k.peerMax {
			ls.AtLimit++
		}
		out = append(out, result.LiveStreams{Socket: id, InFlight: in})
	}
	return out
}

// record returns the window's channelz part.
func (w *czWindow) record() *result.LiveChannelz {
	out := &result.LiveChannelz{Addr: w.addr, Found: w.found, Error: w.err, Channels: []result.LiveChannel{}, Subchannels: []result.LiveSubchannel{}, Sockets: []result.LiveChannelzSocket{}}
	for _, ch := range w.last {
		f := w.first[ch.id]
		out.Channels = append(out.Channels, result.LiveChannel{
			ID: ch.id, Target: ch.target, CallsStarted: ch.started - f.started, CallsSucceeded: ch.succeeded - f.succeeded,
			CallsFailed: ch.failed - f.failed, Subchannels: append([]int64{}, ch.subchannels...),
		})
		if c := w.inflight[ch.id]; c != nil {
			o := &out.Channels[len(out.Channels)-1]
			o.Samples, o.InFlightMax, o.InFlightSum = c.Samples, c.InFlightMax, c.InFlightSum
		}
	}
	ids := make([]int64, 0, len(w.subs))
	for id := range w.subs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		sc := w.subs[id]
		out.Subchannels = append(out.Subchannels, result.LiveSubchannel{ID: id, Target: sc.target, Sockets: append([]int64{}, sc.sockets...)})
	}
	for _, id := range w.sockOrder {
		out.Sockets = append(out.Sockets, *w.sockets[id])
	}
	return out
}

// Finding channelz among the process's listening ports: at most
// maxChannelzProbes of them are asked, each bounded by probeTimeout.
const (
	maxChannelzProbes = 8
	probeTimeout      = 500 * time.Millisecond
)

// findChannelz asks the process's listening TCP addresses, on loopback,
// for channelz's top channels and returns a client of the first that
// answers, or nil. Only one request goes to each port: a port that is not
// gRPC fails it at once.
func findChannelz(ctx context.Context, listening []string, timeout time.Duration) *channelzClient {
	for i, a := range listening {
		if i == maxChannelzProbes {
			break
		}
		addr, ok := loopbackFor(a)
		if !ok {
			continue
		}
		c, err := dialChannelz(ctx, addr, probeTimeout)
		if err != nil {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, err = c.cl.GetTopChannels(pctx, &channelzpb.GetTopChannelsRequest{MaxResults: 1})
		cancel()
		if err != nil {
			c.close()
			continue
		}
		c.timeout = timeout
		return c
	}
	return nil
}

// loopbackFor is the address that reaches a listening address from this
// host: the listener's own, or loopback for a wildcard one.
func loopbackFor(listen string) (string, bool) {
	ap, err := netip.ParseAddrPort(listen)
	if err != nil {
		return "", false
	}
	switch a := ap.Addr(); {
	case a == netip.IPv4Unspecified():
		ap = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port())
	case a == netip.IPv6Unspecified():
		ap = netip.AddrPortFrom(netip.IPv6Loopback(), ap.Port())
	}
	return ap.String(), true
}
