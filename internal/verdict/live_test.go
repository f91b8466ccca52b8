// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

const liveWin = int64(10 * time.Second)

// liveRec is a window of 10 s over a Go process with 2 CPUs, 10% busy,
// holding conns connections to 10.0.0.1:443, each app-limited and idle.
func liveRec(conns int) *result.LiveRecord {
	r := &result.LiveRecord{
		SchemaVersion: 1, Kind: result.KindLive, Status: result.StatusOK, DurationNS: liveWin, IntervalNS: int64(time.Second),
		Process: result.LiveProcess{PID: 9, Comm: "client", Stack: result.StackGo, Language: "go"},
		CPU:     result.LiveCPU{AllowedCPUs: 2, AffinityCPUs: 2, HostCPUs: 2, ProcessNS: liveWin / 5, HostBusyNS: liveWin / 5},
	}
	for i := range conns {
		r.Conns = append(r.Conns, result.LiveConn{Inode: uint32(i + 1), Local: "10.0.0.2:4000" + string(rune('0'+i)), Remote: "10.0.0.1:443",
			Samples: 11, AppLimited: 11, BytesAcked: 1000, BytesReceived: 1000, BusyUS: uint64(liveWin / 1e3 / 10)})
	}
	return r
}

// withChannelz adds channels sharing subchannel 100 with socket 200 per
// connection: calls in flight per channel and streams per socket (means
// over 10 samples), the peer limit and how many samples sat at it.
func withChannelz(r *result.LiveRecord, channels int, calls, streams float64, peerMax int64, atLimit int) *result.LiveRecord {
	cz := &result.LiveChannelz{Addr: "127.0.0.1:1"}
	var socks []int64
	for i := range r.Conns {
		id := int64(200 + i)
		socks = append(socks, id)
		cz.Sockets = append(cz.Sockets, result.LiveChannelzSocket{ID: id, Remote: r.Conns[i].Remote, Samples: 10,
			InFlightSum: int64(streams * 10), InFlightMax: int64(streams), AtLimit: atLimit, PeerMaxStreams: peerMax})
	}
	cz.Subchannels = []result.LiveSubchannel{{ID: 100, Target: "t", Sockets: socks}}
	for i := range channels {
		cz.Channels = append(cz.Channels, result.LiveChannel{ID: int64(i + 1), Target: "t", Subchannels: []int64{100},
			Samples: 10, InFlightSum: int64(calls * 10), InFlightMax: int64(calls)})
	}
	r.Channelz = cz
	return r
}

func wantKind(t *testing.T, name string, r *result.LiveRecord, kind string) LiveVerdict {
	t.Helper()
	v := Live(r)
	if v.Kind != kind {
		t.Errorf("%s: got %s (%s), want %s", name, v.Kind, v.Text, kind)
	}
	return v
}

// TestLiveStreamLimit: a socket flat at one stream while its channel has 8
// calls in flight advises 8 connections; at the reported peer limit in
// half the samples it fires, just under half it does not; calls in flight
// only LiveQueuedCalls above streams is the edge without a limit.
func TestLiveStreamLimit(t *testing.T) {
	v := wantKind(t, "flat at 1 with 8 calls", withChannelz(liveRec(1), 1, 8, 1, 0, 0), LiveStreamLimit)
	if v.Conns != 8 || !strings.Contains(v.Text, "use 8 connections") {
		t.Errorf("advice %d (%s), want 8 connections", v.Conns, v.Text)
	}
	wantKind(t, "calls just at the queue edge (0.5)", withChannelz(liveRec(1), 1, 1.5, 1, 0, 0), LiveStreamLimit)
	wantKind(t, "calls below the queue edge", withChannelz(liveRec(1), 1, 1.4, 1, 0, 0), LiveNotClient)
	// 8 channels of one call on 8 sockets caught between calls (0.8
	// streams each): 1.6 calls over streams in all, 0.2 a channel.
	perWorker := liveRec(8)
	perWorker.Channelz = &result.LiveChannelz{Addr: "127.0.0.1:1"}
	for i := range 8 {
		id := int64(i)
		perWorker.Channelz.Channels = append(perWorker.Channelz.Channels, result.LiveChannel{ID: id, Subchannels: []int64{100 + id}, Samples: 5, InFlightSum: 5, InFlightMax: 1})
		perWorker.Channelz.Subchannels = append(perWorker.Channelz.Subchannels, result.LiveSubchannel{ID: 100 + id, Sockets: []int64{200 + id}})
		perWorker.Channelz.Sockets = append(perWorker.Channelz.Sockets, result.LiveChannelzSocket{ID: 200 + id, Remote: "10.0.0.1:443", Samples: 5, InFlightSum: 4, InFlightMax: 1})
	}
	wantKind(t, "a channel a worker, between calls", perWorker, LiveNotClient)
	wantKind(t, "at the peer limit half the samples", withChannelz(liveRec(1), 1, 100, 100, 100, 5), LiveStreamLimit)
	wantKind(t, "at the peer limit under half", withChannelz(liveRec(1), 1, 100, 100, 100, 4), LiveNotClient)
}

// TestLiveTrap: more channels than sockets is the trap, as many as sockets
// is not; a C-core or grpc-js process with one busy connection is, a JVM or
// two connections are not.
func TestLiveTrap(t *testing.T) {
	v := wantKind(t, "4 channels, 1 socket", withChannelz(liveRec(1), 4, 1, 1, 0, 0), LiveTrap)
	if v.Conns != 4 {
		t.Errorf("advice %d, want 4", v.Conns)
	}
	wantKind(t, "1 channel, 1 socket", withChannelz(liveRec(1), 1, 1, 1, 0, 0), LiveNotClient)
	r := liveRec(1)
	r.Process.Stack, r.Process.Language = result.StackCCore, "python"
	v = wantKind(t, "C-core, one connection", r, LiveTrap)
	if !strings.Contains(v.Next, "--client python") {
		t.Errorf("next %q, want the study in python", v.Next)
	}
	r.Process.Stack, r.Process.Language = result.StackNode, "node"
	wantKind(t, "grpc-js, one connection", r, LiveTrap)
	r.Process.Stack, r.Process.Language = result.StackJava, "java"
	wantKind(t, "grpc-java, one connection", r, LiveCannotTell)
	r = liveRec(2)
	r.Process.Stack = result.StackCCore
	wantKind(t, "C-core, two connections", r, LiveCannotTell)
}

// TestLiveClientCPU: the process at ClientCPUBusy of its allowed CPUs is
// the client's CPU, just below is not; its quota counts when lower than
// its affinity; one thread at LiveThreadBusy of a core is the thread
// rule, just below is not.
func TestLiveClientCPU(t *testing.T) {
	r := liveRec(1)
	r.CPU.ProcessNS = int64(ClientCPUBusy * 2 * float64(liveWin))
	wantKind(t, "at the edge", r, LiveClientCPU)
	r.CPU.ProcessNS = int64((ClientCPUBusy - 0.01) * 2 * float64(liveWin))
	wantKind(t, "below the edge", r, LiveCannotTell)
	r.CPU.ProcessNS = int64(0.3 * 2 * float64(liveWin))
	r.CPU.WaitNS = int64(ClientCPUBusy*2*float64(liveWin)) - r.CPU.ProcessNS + 1 // float rounding
	wantKind(t, "used and waited at the edge", r, LiveClientCPU)
	r.CPU.WaitNS -= int64(0.01 * 2 * float64(liveWin))
	wantKind(t, "used and waited below the edge", r, LiveCannotTell)
	r = liveRec(1)
	r.CPU.AllowedCPUs, r.CPU.QuotaCPUs, r.CPU.ProcessNS = 0.5, 0.5, liveWin/2
	v := wantKind(t, "at a half-CPU quota", r, LiveClientCPU)
	if !strings.Contains(v.Evidence[0], "quota of 0.50") {
		t.Errorf("evidence %q, want the quota", v.Evidence)
	}
	r = liveRec(1)
	r.CPU.Threads = []result.LiveThread{{TID: 10, Name: "grpc_global_tim", CPUNS: int64(LiveThreadBusy * float64(liveWin))}}
	r.CPU.ProcessNS = r.CPU.Threads[0].CPUNS
	wantKind(t, "one thread at a core", r, LiveClientThread)
	r.CPU.Threads[0].CPUNS = int64((LiveThreadBusy - 0.01) * float64(liveWin))
	wantKind(t, "one thread below a core", r, LiveCannotTell)
}

// TestLiveNetwork: a busy connection rwnd-limited half its busy time is
// the network, just under is not; busy LiveCwndShare of the window and not
// app-limited is its cwnd; 1% of bytes sent again is loss; a connection
// under LiveBusyShare busy is never the network.
func TestLiveNetwork(t *testing.T) {
	busy := uint64(liveWin / 1e3)
	r := liveRec(1)
	c := &r.Conns[0]
	c.BusyUS, c.RwndLimitedUS = busy, busy/2
	v := wantKind(t, "rwnd half", r, LiveNetwork)
	if !strings.Contains(v.Text, "receive window") {
		t.Errorf("text %q, want the receive window", v.Text)
	}
	c.RwndLimitedUS = busy/2 - busy/100
	wantKind(t, "rwnd under half, app-limited", r, LiveCannotTell)
	c.RwndLimitedUS, c.SndbufLimitedUS = 0, busy/2
	wantKind(t, "sndbuf half", r, LiveNetwork)
	c.SndbufLimitedUS, c.AppLimited, c.BusyUS, c.NotsentMaxBytes = 0, 0, uint64(LiveCwndShare*float64(busy)), 1
	wantKind(t, "cwnd", r, LiveNetwork)
	c.NotsentMaxBytes = 0
	wantKind(t, "busy, nothing unsent (a delayed reply's ACK)", r, LiveCannotTell)
	c.NotsentMaxBytes = 1
	c.BusyUS = uint64((LiveCwndShare - 0.01) * float64(busy))
	wantKind(t, "under cwnd share", r, LiveCannotTell)
	c.BytesSent, c.BytesRetrans = 10000, 100
	wantKind(t, "1% retransmitted", r, LiveNetwork)
	c.BytesRetrans = 99
	wantKind(t, "under 1% retransmitted", r, LiveCannotTell)
	c.BusyUS, c.RwndLimitedUS = uint64((LiveBusyShare-0.01)*float64(busy)), busy/2
	wantKind(t, "limited but mostly idle", r, LiveCannotTell)
}

// TestLiveWaiting: idle connections with channelz and no queue are not
// the client; without channelz the window cannot tell, names the study
// and, for Go, says why; a server and a process with no connections are
// said as such.
func TestLiveWaiting(t *testing.T) {
	v := wantKind(t, "no channelz", liveRec(1), LiveCannotTell)
	if v.Next != "rpclab doctor --target 10.0.0.1:443" || !strings.Contains(strings.Join(v.Notes, " "), "goroutines") {
		t.Errorf("next %q notes %q, want the study and Go's note", v.Next, v.Notes)
	}
	v = wantKind(t, "channelz, no queue", withChannelz(liveRec(1), 1, 1, 1, 0, 0), LiveNotClient)
	if v.Next != "" {
		t.Errorf("next %q, want none", v.Next)
	}
	r := liveRec(1)
	r.Listening = []string{"0.0.0.0:443"}
	r.Conns[0].Local = "10.0.0.2:443"
	wantKind(t, "a server", r, LiveServerOnly)
	wantKind(t, "nothing", liveRec(0), LiveNoConnections)
}

// TestLiveBusyHost: other work at OtherWorkShare of the host is noted,
// just below is not.
func TestLiveBusyHost(t *testing.T) {
	r := liveRec(1)
	r.CPU.HostBusyNS = r.CPU.ProcessNS + int64(OtherWorkShare*2*float64(liveWin))
	if n := strings.Join(Live(r).Notes, " "); !strings.Contains(n, "host is busy") {
		t.Errorf("notes %q, want the busy host", n)
	}
	r.CPU.HostBusyNS -= int64(0.01 * 2 * float64(liveWin))
	if n := strings.Join(Live(r).Notes, " "); strings.Contains(n, "host is busy") {
		t.Errorf("notes %q, want no busy host", n)
	}
}
