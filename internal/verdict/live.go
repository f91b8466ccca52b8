// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"cmp"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

// Kinds of a live verdict (LiveVerdict.Kind), in the order the rules are
// tried.
const (
	// LiveTrap: more channels than sockets to one target (channelz), or a
	// C-core or grpc-js process carrying a target's RPCs on one connection. Said
	// before the stream limit: calls from channels that share a socket
	// queue at its limit too, and the fix is the channels' own
	// connections.
	LiveTrap = "trap"
	// LiveStreamLimit: a socket's streams in flight sat at the peer's
	// stream limit, or flat at one value while the channel had more calls
	// in flight, for most of the window: RPCs queue in the client.
	LiveStreamLimit = "stream-limit"
	// LiveClientCPU: the process used most of the CPUs it may use.
	LiveClientCPU = "client-cpu"
	// LiveClientThread: one thread near a full core while the process had
	// CPUs to spare (a connection's I/O thread).
	LiveClientThread = "client-thread"
	// LiveNetwork: the busiest connection was limited by the peer's
	// receive window, its own send buffer, its congestion window, or lost
	// packets.
	LiveNetwork = "network"
	// LiveNotClient: channelz shows no call waiting for a stream, the
	// connections are mostly idle or app-limited, and the CPU is spare:
	// the time goes to waiting for the server.
	LiveNotClient = "not-the-client"
	// LiveCannotTell: the kernel shows neither a client limit nor a
	// network one, and nothing says whether calls wait for a stream.
	LiveCannotTell = "cannot-tell"
	// LiveServerOnly: the process has listening sockets and no connection
	// of its own to another server.
	LiveServerOnly = "server-only"
	// LiveNoConnections: the process has no TCP connection.
	LiveNoConnections = "no-connections"
)

// Thresholds of the live rules, each tested on both sides of its edge.
const (
	// LiveAtLimitShare: a socket whose streams in flight sat at the peer's
	// limit (or flat while calls waited) in at least this share of the
	// window's samples is at its stream limit.
	LiveAtLimitShare = 0.5
	// LiveQueuedCalls: the channels' mean calls in flight above their
	// sockets' mean streams in flight by at least this many are calls
	// waiting for a stream.
	LiveQueuedCalls = 0.5
	// LiveThreadBusy: a thread busy at least this share of one core over
	// the window is at a full core.
	LiveThreadBusy = 0.9
	// LiveBusyShare: a connection with data in flight (tcpi_busy_time)
	// at least this share of the window is busy; below, mostly idle.
	LiveBusyShare = 0.5
	// LiveLimitedShare: a busy connection limited by rwnd or sndbuf at
	// least this share of its busy time is limited by them.
	LiveLimitedShare = 0.5
	// LiveCwndShare: a connection busy at least this share of the window,
	// not app-limited, with bytes left unsent in the socket (more than its
	// congestion window let out) is limited by its congestion window.
	// Busy alone is not enough: a request whose reply the server delays
	// stays unacknowledged (its ACK rides on the reply), so request and
	// reply traffic reads busy all the time.
	LiveCwndShare = 0.9
	// LiveRetransShare: retransmitted bytes at least this share of bytes
	// sent are loss.
	LiveRetransShare = 0.01
	// LiveAppLimitedShare: a connection app-limited in at least this share
	// of its samples sends what the application gives it.
	LiveAppLimitedShare = 0.5
)

// LiveTarget is the connections to one remote address over the window.
type LiveTarget struct {
	Remote        string
	Conns         []result.LiveConn
	BytesAcked    uint64
	BytesReceived uint64
}

// Bytes is what the target's connections moved both ways.
func (t LiveTarget) Bytes() uint64 { return t.BytesAcked + t.BytesReceived }

// LiveVerdict is the judgement of one live window.
type LiveVerdict struct {
	Kind string
	// Target is the remote address the verdict concerns ("" for none).
	Target string
	// Text is the verdict in one sentence; Evidence what it rests on.
	Text     string
	Evidence []string
	// Conns is the connections to advise (0: no pool change).
	Conns int
	// Next is the study to run when the window cannot tell more.
	Next string
	// Notes are said with any verdict: a busy host, an ended process,
	// Go's threads, a failed channelz read.
	Notes []string
	// Targets are the client connections by remote address, most bytes
	// first; Inbound the connections to the process's own listeners.
	Targets []LiveTarget
	Inbound int
}

// LiveTargets groups the process's client connections by remote address,
// most bytes first, and counts those to its own listening ports.
func LiveTargets(r *result.LiveRecord) (targets []LiveTarget, inbound int) {
	ports := map[string]bool{}
	for _, l := range r.Listening {
		if _, p, err := net.SplitHostPort(l); err == nil {
			ports[p] = true
		}
	}
	by := map[string]*LiveTarget{}
	for _, c := range r.Conns {
		if _, p, err := net.SplitHostPort(c.Local); err == nil && ports[p] {
			inbound++
			continue
		}
		t := by[c.Remote]
		if t == nil {
			t = &LiveTarget{Remote: c.Remote}
			by[c.Remote] = t
		}
		t.Conns = append(t.Conns, c)
		t.BytesAcked += c.BytesAcked
		t.BytesReceived += c.BytesReceived
	}
	for _, t := range by {
		targets = append(targets, *t)
	}
	slices.SortFunc(targets, func(a, b LiveTarget) int {
		return cmp.Or(cmp.Compare(b.Bytes(), a.Bytes()), cmp.Compare(len(b.Conns), len(a.Conns)), strings.Compare(a.Remote, b.Remote))
	})
	return targets, inbound
}

// Live judges a live window, trying the rules in the order of the Live*
// kinds; each says what it rests on.
func Live(r *result.LiveRecord) LiveVerdict {
	v := LiveVerdict{}
	v.Targets, v.Inbound = LiveTargets(r)
	v.Notes = liveNotes(r)
	if len(v.Targets) == 0 {
		if len(r.Listening) > 0 || v.Inbound > 0 {
			v.Kind = LiveServerOnly
			v.Text = fmt.Sprintf("the process is a server: it listens on %s and holds %d connections from its clients, and none of its own to another server; attach to a client's PID", strings.Join(r.Listening, ", "), v.Inbound)
			return v
		}
		v.Kind = LiveNoConnections
		v.Text = "the process held no TCP connection in the window: nothing to judge (is it the client, and was it sending?)"
		return v
	}
	main := v.Targets[0]
	v.Target = main.Remote
	for _, rule := range []func(*result.LiveRecord, LiveTarget, *LiveVerdict) bool{
		liveTrapChannelz, liveStreamLimit, liveClientCPU, liveTrapShared, liveNetwork,
	} {
		if rule(r, main, &v) {
			return v
		}
	}
	liveWaiting(r, main, &v)
	return v
}

// liveNotes are what any verdict says beside it.
func liveNotes(r *result.LiveRecord) []string {
	var notes []string
	if r.Note != "" {
		notes = append(notes, r.Note)
	}
	d := float64(r.DurationNS)
	if d > 0 && r.CPU.HostCPUs > 0 {
		other := (float64(r.CPU.HostBusyNS) - float64(r.CPU.ProcessNS)) / (d * float64(r.CPU.HostCPUs))
		if other >= OtherWorkShare {
			notes = append(notes, fmt.Sprintf("the host is busy: other work took %.0f%% of its %d CPUs (at or above %.0f%%): the process's CPU and the connections' timing share the host with it", 100*min(other, 1), r.CPU.HostCPUs, 100*OtherWorkShare))
		}
	}
	if r.Channelz != nil && r.Channelz.Error != "" {
		notes = append(notes, "a channelz read failed during the window: "+r.Channelz.Error)
	}
	return notes
}

// channelsTo returns the channelz channels whose sockets reach target,
// or, when no socket matches, whose own target names it.
func channelsTo(cz *result.LiveChannelz, target string) (chans []result.LiveChannel, sockets []result.LiveChannelzSocket) {
	subs := map[int64]result.LiveSubchannel{}
	for _, s := range cz.Subchannels {
		subs[s.ID] = s
	}
	socks := map[int64]result.LiveChannelzSocket{}
	for _, s := range cz.Sockets {
		socks[s.ID] = s
	}
	seen := map[int64]bool{}
	for _, ch := range cz.Channels {
		hit := false
		var mine []result.LiveChannelzSocket
		for _, id := range ch.Subchannels {
			for _, sid := range subs[id].Sockets {
				if s, ok := socks[sid]; ok && s.Remote == target {
					hit = true
					mine = append(mine, s)
				}
			}
		}
		if !hit {
			continue
		}
		chans = append(chans, ch)
		for _, s := range mine {
			if !seen[s.ID] {
				seen[s.ID] = true
				sockets = append(sockets, s)
			}
		}
	}
	return chans, sockets
}

func mean(sum int64, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// liveStreamLimit: the target's sockets sat at the peer's limit, or flat
// at one value while the channels held more calls than streams.
func liveStreamLimit(r *result.LiveRecord, t LiveTarget, v *LiveVerdict) bool {
	if r.Channelz == nil {
		return false
	}
	chans, socks := channelsTo(r.Channelz, t.Remote)
	if len(socks) == 0 {
		return false
	}
	var calls, streams, queued float64
	for _, ch := range chans {
		c := mean(ch.InFlightSum, ch.Samples)
		calls += c
		queued += max(c-channelStreams(r.Channelz, ch, t.Remote), 0)
	}
	// Calls wait when a channel holds more calls than its sockets hold
	// streams, by LiveQueuedCalls a channel: a call counted between its
	// start and its stream's makes a small difference on any channel.
	queued /= float64(len(chans))
	atLimit, perSocket := 0, int64(0)
	var limit int64
	for _, s := range socks {
		m := mean(s.InFlightSum, s.Samples)
		streams += m
		flat := s.InFlightMax > 0 && float64(s.InFlightMax)-m < max(0.25, 0.05*float64(s.InFlightMax))
		switch {
		case s.PeerMaxStreams > 0 && s.Samples > 0 && float64(s.AtLimit) >= LiveAtLimitShare*float64(s.Samples):
			atLimit++
			limit = s.PeerMaxStreams
			perSocket = max(perSocket, s.PeerMaxStreams)
		case s.PeerMaxStreams == 0 && flat:
			atLimit++
			perSocket = max(perSocket, s.InFlightMax)
		}
	}
	if atLimit < len(socks) || perSocket == 0 || (limit == 0 && queued < LiveQueuedCalls) {
		return false
	}
	v.Kind = LiveStreamLimit
	v.Conns = max(int(math.Ceil(calls/float64(perSocket))), len(socks)+1)
	lim := fmt.Sprintf("the peer's limit of %d streams a connection (peer_max_concurrent_streams)", limit)
	if limit == 0 {
		lim = fmt.Sprintf("one value, %d, as a stream limit holds it (this stack does not report the peer's limit)", perSocket)
	}
	v.Text = fmt.Sprintf("RPCs queue in the client for a stream: the %d connection(s) to %s are at their stream limit; use %d connections", len(socks), t.Remote, v.Conns)
	v.Evidence = []string{
		fmt.Sprintf("channelz: streams in flight sat at %s in at least %.0f%% of the samples on every socket", lim, 100*LiveAtLimitShare),
		fmt.Sprintf("channelz: %.1f calls in flight on %d channel(s) against %.1f streams on their sockets: %.1f calls a channel waited for a stream", calls, len(chans), streams, queued),
		fmt.Sprintf("%d connections carry %.1f calls at %d streams each", v.Conns, calls, perSocket),
	}
	return true
}

// channelStreams is the mean streams in flight on ch's sockets to target.
func channelStreams(cz *result.LiveChannelz, ch result.LiveChannel, target string) float64 {
	subs := map[int64]bool{}
	for _, id := range ch.Subchannels {
		subs[id] = true
	}
	mine := map[int64]bool{}
	for _, sc := range cz.Subchannels {
		if subs[sc.ID] {
			for _, id := range sc.Sockets {
				mine[id] = true
			}
		}
	}
	n := 0.0
	for _, s := range cz.Sockets {
		if mine[s.ID] && s.Remote == target {
			n += mean(s.InFlightSum, s.Samples)
		}
	}
	return n
}

// liveTrapChannelz: more channels carrying calls than sockets to a target.
func liveTrapChannelz(r *result.LiveRecord, t LiveTarget, v *LiveVerdict) bool {
	if r.Channelz == nil {
		return false
	}
	chans, socks := channelsTo(r.Channelz, t.Remote)
	if len(chans) < 2 || len(chans) <= len(socks) {
		return false
	}
	v.Kind = LiveTrap
	v.Conns = len(chans)
	v.Text = fmt.Sprintf("the connection-count trap: %d channels to %s share %d connection(s); give each channel its own connection (a pool of %d)", len(chans), t.Remote, len(socks), len(chans))
	v.Evidence = []string{fmt.Sprintf("channelz: %d top channels list subchannels whose sockets are %d connection(s) to %s", len(chans), len(socks), t.Remote)}
	if r.Process.Stack == result.StackCCore {
		v.Evidence = append(v.Evidence, "C-core shares a subchannel among channels with equal arguments (the global subchannel pool)")
	}
	return true
}

// liveClientCPU: the process at its allowed CPUs, or one thread at a full
// core while the process has CPUs to spare.
func liveClientCPU(r *result.LiveRecord, _ LiveTarget, v *LiveVerdict) bool {
	d := float64(r.DurationNS)
	if d <= 0 || r.CPU.AllowedCPUs <= 0 {
		return false
	}
	used := float64(r.CPU.ProcessNS) / d
	waited := float64(r.CPU.WaitNS) / d
	// Demand is the CPU it used and the CPU it waited for: on a host
	// whose other work takes the CPUs, a saturated client runs less than
	// its allowed CPUs and waits the rest, capped at what it may use.
	share := min(used+waited, r.CPU.AllowedCPUs) / r.CPU.AllowedCPUs
	if share >= ClientCPUBusy {
		v.Kind = LiveClientCPU
		v.Text = fmt.Sprintf("the client's CPU is the limit: the process used %.2f and waited for %.2f more of the %.2f CPUs it may use; more connections cannot help until it has CPU to spare", used, waited, r.CPU.AllowedCPUs)
		v.Evidence = []string{fmt.Sprintf("/proc: CPU used and waited for at %.0f%% of its allowed CPUs (at or above %.0f%%): %s", 100*share, 100*ClientCPUBusy, allowedText(r.CPU))}
		if waited > 0.1*used {
			v.Evidence = append(v.Evidence, fmt.Sprintf("schedstat: its threads waited %.2f CPUs' worth for a CPU: other work on its CPUs takes what it would use", waited))
		}
		if len(r.CPU.Threads) > 0 {
			th := r.CPU.Threads[0]
			v.Evidence = append(v.Evidence, fmt.Sprintf("busiest thread %q (%d): %.2f of a core", th.Name, th.TID, float64(th.CPUNS)/d))
		}
		return true
	}
	if len(r.CPU.Threads) == 0 || r.CPU.AllowedCPUs < 1+LiveThreadBusy {
		return false
	}
	th := r.CPU.Threads[0]
	if float64(th.CPUNS)/d < LiveThreadBusy {
		return false
	}
	v.Kind = LiveClientThread
	v.Text = fmt.Sprintf("one thread is the limit: %q (%d) used %.2f of a core while the process used %.2f of its %.2f CPUs: if it is a connection's I/O thread, more connections on more threads help", th.Name, th.TID, float64(th.CPUNS)/d, used, r.CPU.AllowedCPUs)
	v.Evidence = []string{fmt.Sprintf("/proc/PID/task: thread %q at %.0f%% of a core (at or above %.0f%%)", th.Name, 100*float64(th.CPUNS)/d, 100*LiveThreadBusy)}
	if r.Process.Stack == result.StackGo {
		v.Notes = append(v.Notes, "a Go process's goroutines move between threads: a busy thread there is the scheduler's, not one connection's")
	}
	return true
}

func allowedText(c result.LiveCPU) string {
	s := fmt.Sprintf("%d CPUs in its affinity", c.AffinityCPUs)
	if c.QuotaCPUs > 0 {
		s += fmt.Sprintf(", a cgroup quota of %.2f", c.QuotaCPUs)
	}
	return s
}

// liveTrapShared: a C-core or grpc-js process with one connection to its
// target carrying its RPCs: both stacks hand channels with equal
// arguments one subchannel from a global pool.
func liveTrapShared(r *result.LiveRecord, t LiveTarget, v *LiveVerdict) bool {
	if (r.Process.Stack != result.StackCCore && r.Process.Stack != result.StackNode) || r.Channelz != nil || len(t.Conns) != 1 || t.Bytes() == 0 {
		return false
	}
	v.Kind = LiveTrap
	v.Text = fmt.Sprintf("likely the connection-count trap: this %s process carries all its RPCs to %s on one connection; %s shares it among channels with equal arguments (its global subchannel pool), so channels opened per worker do not add connections", r.Process.Stack, t.Remote, r.Process.Stack)
	v.Evidence = []string{
		fmt.Sprintf("the stack: %s (%s)", r.Process.Stack, r.Process.StackDetail),
		fmt.Sprintf("sock_diag: 1 connection to %s moved %d bytes in the window", t.Remote, t.Bytes()),
		"channelz (--channelz) would show whether several channels share it",
	}
	v.Next = LiveStudy(r, t.Remote)
	return true
}

// liveNetwork: the busiest connection limited by rwnd, sndbuf, cwnd or
// loss.
func liveNetwork(r *result.LiveRecord, t LiveTarget, v *LiveVerdict) bool {
	winUS := float64(r.DurationNS) / 1e3
	if winUS <= 0 {
		return false
	}
	c := slices.MaxFunc(t.Conns, func(a, b result.LiveConn) int {
		return cmp.Compare(a.BytesAcked+a.BytesReceived, b.BytesAcked+b.BytesReceived)
	})
	busy := float64(c.BusyUS) / winUS
	if busy < LiveBusyShare {
		return false
	}
	limited := float64(c.RwndLimitedUS+c.SndbufLimitedUS) / float64(c.BusyUS)
	appLimited := c.Samples > 0 && float64(c.AppLimited) >= LiveAppLimitedShare*float64(c.Samples)
	var why string
	switch {
	case limited >= LiveLimitedShare && c.RwndLimitedUS >= c.SndbufLimitedUS:
		why = fmt.Sprintf("the peer's receive window: rwnd-limited %.0f%% of its busy time: the server reads slowly or its window is small", 100*float64(c.RwndLimitedUS)/float64(c.BusyUS))
	case limited >= LiveLimitedShare:
		why = fmt.Sprintf("the client's send buffer: sndbuf-limited %.0f%% of its busy time", 100*float64(c.SndbufLimitedUS)/float64(c.BusyUS))
	case c.BytesSent > 0 && float64(c.BytesRetrans) >= LiveRetransShare*float64(c.BytesSent):
		why = fmt.Sprintf("loss: %.1f%% of the bytes sent were sent again", 100*float64(c.BytesRetrans)/float64(c.BytesSent))
	case busy >= LiveCwndShare && !appLimited && c.NotsentMaxBytes > 0:
		why = fmt.Sprintf("its congestion window (cwnd %d segments, RTT %v): busy, not app-limited, up to %d bytes waiting unsent", c.SndCwnd, time.Duration(c.RTTUS)*time.Microsecond, c.NotsentMaxBytes)
	default:
		return false
	}
	v.Kind = LiveNetwork
	v.Text = fmt.Sprintf("the network or the peer is the limit: the busiest connection to %s is held by %s", t.Remote, why)
	v.Evidence = []string{fmt.Sprintf("sock_diag: %s -> %s had data in flight %.0f%% of the window (at or above %.0f%%)", c.Local, c.Remote, 100*busy, 100*LiveBusyShare)}
	return true
}

// liveWaiting: no client limit and no network limit: with channelz
// showing no call waiting, the server; without it, the window cannot tell
// the server from calls queued for a stream, and names the study.
func liveWaiting(r *result.LiveRecord, t LiveTarget, v *LiveVerdict) {
	d := float64(r.DurationNS)
	used := 0.0
	if d > 0 && r.CPU.AllowedCPUs > 0 {
		used = float64(r.CPU.ProcessNS) / d / r.CPU.AllowedCPUs
	}
	idle := 0
	var busy float64
	for _, c := range t.Conns {
		if d > 0 {
			busy += float64(c.BusyUS) * 1e3 / d / float64(len(t.Conns))
		}
		if (c.Samples > 0 && float64(c.AppLimited) >= LiveAppLimitedShare*float64(c.Samples)) || d <= 0 || float64(c.BusyUS)*1e3/d < LiveBusyShare {
			idle++
		}
	}
	v.Evidence = []string{
		fmt.Sprintf("sock_diag: %d of %d connection(s) to %s app-limited or mostly idle; data unacknowledged %.0f%% of the window, none limited by rwnd, sndbuf, cwnd or loss", idle, len(t.Conns), t.Remote, 100*busy),
		fmt.Sprintf("/proc: the process used %.0f%% of the CPUs it may use (below %.0f%%)", 100*used, 100*ClientCPUBusy),
	}
	v.Next = LiveStudy(r, t.Remote)
	if r.Channelz != nil {
		if chans, socks := channelsTo(r.Channelz, t.Remote); len(socks) > 0 {
			v.Kind = LiveNotClient
			v.Text = fmt.Sprintf("not the client: its CPU is spare, its connections to %s are limited by neither the network nor the peer's window, and no call waits for a stream: the time goes to waiting for the server", t.Remote)
			v.Evidence = append(v.Evidence, fmt.Sprintf("channelz: %d channel(s), %d socket(s), no call waiting for a stream", len(chans), len(socks)))
			v.Next = ""
			return
		}
	}
	v.Kind = LiveCannotTell
	v.Text = fmt.Sprintf("the kernel shows no limit in the client's CPU or the network to %s; from outside it cannot tell a slow server from RPCs queued for a stream on %d connection(s)", t.Remote, len(t.Conns))
	if r.Channelz == nil {
		v.Evidence = append(v.Evidence, "no channelz (no listening port of the process asked answered it): give --channelz host:port where the process serves it, or run the study")
	}
	if r.Process.Stack == result.StackGo {
		v.Notes = append(v.Notes, "a Go process's goroutines do not map to threads: the kernel cannot see RPCs waiting for a stream")
	}
}

// LiveStudy is the active study that tells what a live window cannot:
// rpclab doctor against the target, with the process's stack's client.
func LiveStudy(r *result.LiveRecord, target string) string {
	s := "rpclab doctor --target " + target
	switch l := r.Process.Language; l {
	case "go", "unknown", "":
	case "ruby":
		s += " --client cpp"
	default:
		s += " --client " + l
	}
	return s
}
