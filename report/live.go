// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/verdict"
)

// LiveSection shows live records (rpclab doctor --pid): each window's
// connections, CPU and channelz, and its verdict.
type LiveSection struct{ Records []result.LiveRecord }

var _ Section = LiveSection{}

// Kind is result.KindLive.
func (LiveSection) Kind() string { return result.KindLive }

// Table writes each window as LiveText prints it.
func (s LiveSection) Table(w io.Writer) error {
	for i := range s.Records {
		if i > 0 {
			fmt.Fprintln(w)
		}
		LiveText(w, &s.Records[i])
	}
	return nil
}

// Charts: a live window's figures are its time lines (LiveTimeline).
func (s LiveSection) Charts() []Chart { return nil }

func (s LiveSection) html() (template.HTML, error) {
	var b strings.Builder
	b.WriteString("<h2>Live process</h2>\n")
	for i := range s.Records {
		var t strings.Builder
		LiveText(&t, &s.Records[i])
		LiveTimeline(&t, &s.Records[i])
		b.WriteString("<pre>" + template.HTMLEscapeString(t.String()) + "</pre>\n")
	}
	return template.HTML(b.String()), nil
}

// LiveFrame writes a window's process, connections per target, CPU and
// channelz: what --watch redraws every second.
func LiveFrame(w io.Writer, r *result.LiveRecord, v *verdict.LiveVerdict) {
	p := r.Process
	stack := p.Stack
	if p.StackDetail != "" {
		stack += " (" + p.StackDetail + ")"
	}
	d := time.Duration(r.DurationNS)
	fmt.Fprintf(w, "pid %d (%s), %s, %v window, status %s\n", p.PID, p.Comm, stack, d.Round(time.Millisecond), r.Status)
	secs := d.Seconds()
	if secs <= 0 {
		secs = 1
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tconns\tsent/s\treceived/s\tbusy\trwnd-lim\tsndbuf-lim\tapp-limited\tunsent max\trtt\tretrans\t")
	for _, t := range v.Targets {
		var busy, rwnd, snd, retrans uint64
		var app, samples int
		var unsent, rtt uint32
		for _, c := range t.Conns {
			busy, rwnd, snd, retrans = busy+c.BusyUS, rwnd+c.RwndLimitedUS, snd+c.SndbufLimitedUS, retrans+c.BytesRetrans
			app, samples = app+c.AppLimited, samples+c.Samples
			unsent, rtt = max(unsent, c.NotsentMaxBytes), max(rtt, c.RTTUS)
		}
		winUS := secs * 1e6 * float64(len(t.Conns))
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.0f%%\t%.0f%%\t%.0f%%\t%s\t%s\t%v\t%s\t\n", t.Remote, len(t.Conns),
			liveBytes(int64(float64(t.BytesAcked)/secs)), liveBytes(int64(float64(t.BytesReceived)/secs)),
			100*float64(busy)/winUS, 100*float64(rwnd)/winUS, 100*float64(snd)/winUS, share(app, samples),
			liveBytes(int64(unsent)), time.Duration(rtt)*time.Microsecond, liveBytes(int64(retrans)))
	}
	tw.Flush()
	if v.Inbound > 0 || len(r.Listening) > 0 {
		fmt.Fprintf(w, "listening on %s, %d connections from clients\n", strings.Join(r.Listening, ", "), v.Inbound)
	}
	liveCPU(w, r, secs)
	liveChannelz(w, r, secs)
}

func share(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}

// liveCPU writes the process's and its busiest threads' CPU, and the
// host's other work.
func liveCPU(w io.Writer, r *result.LiveRecord, secs float64) {
	c := r.CPU
	allowed := fmt.Sprintf("%d in its affinity", c.AffinityCPUs)
	if c.QuotaCPUs > 0 {
		allowed += fmt.Sprintf(", a cgroup quota of %.2f", c.QuotaCPUs)
	}
	fmt.Fprintf(w, "CPU: the process used %.2f (and waited %.2f for a CPU) of the %.2f CPUs it may use (%s), %d threads; busiest:",
		float64(c.ProcessNS)/1e9/secs, float64(c.WaitNS)/1e9/secs, c.AllowedCPUs, allowed, c.ThreadCount)
	for i, t := range c.Threads {
		if i == 5 {
			break
		}
		fmt.Fprintf(w, " %s(%d) %.2f", t.Name, t.TID, float64(t.CPUNS)/1e9/secs)
	}
	fmt.Fprintln(w)
	if c.HostCPUs > 0 {
		fmt.Fprintf(w, "host: other work used %.2f of its %d CPUs\n", max(float64(c.HostBusyNS-c.ProcessNS), 0)/1e9/secs, c.HostCPUs)
	}
}

// liveChannelz writes the channel -> subchannel -> socket map with calls
// per second and streams in flight.
func liveChannelz(w io.Writer, r *result.LiveRecord, secs float64) {
	cz := r.Channelz
	if cz == nil {
		return
	}
	fmt.Fprintf(w, "channelz %s: %d channels, %d subchannels, %d sockets\n", cz.Addr, len(cz.Channels), len(cz.Subchannels), len(cz.Sockets))
	subs := map[int64]result.LiveSubchannel{}
	for _, s := range cz.Subchannels {
		subs[s.ID] = s
	}
	socks := map[int64]result.LiveChannelzSocket{}
	for _, s := range cz.Sockets {
		socks[s.ID] = s
	}
	for _, ch := range cz.Channels {
		fmt.Fprintf(w, "  channel %d %s: %.0f calls/s, %s calls in flight\n", ch.ID, ch.Target, float64(ch.CallsSucceeded+ch.CallsFailed)/secs, inflight(ch.InFlightSum, ch.InFlightMax, ch.Samples))
		for _, id := range ch.Subchannels {
			for _, sid := range subs[id].Sockets {
				s := socks[sid]
				lim := "not reported"
				if s.PeerMaxStreams > 0 {
					lim = fmt.Sprint(s.PeerMaxStreams)
				}
				fmt.Fprintf(w, "    subchannel %d -> socket %d %s: %s streams in flight, peer limit %s\n", id, sid, s.Remote, inflight(s.InFlightSum, s.InFlightMax, s.Samples), lim)
			}
		}
	}
	if cz.Error != "" {
		fmt.Fprintf(w, "  (a read failed: %s)\n", cz.Error)
	}
}

func inflight(sum, most int64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f (max %d)", float64(sum)/float64(n), most)
}

// LiveText writes a window and its verdict (verdict.Live), with the fix
// in the process's stack.
func LiveText(w io.Writer, r *result.LiveRecord) {
	v := verdict.Live(r)
	LiveFrame(w, r, &v)
	fmt.Fprintf(w, "\nVerdict (%s): %s.\n", v.Kind, v.Text)
	for _, e := range v.Evidence {
		fmt.Fprintf(w, "  - %s\n", e)
	}
	if v.Conns > 0 {
		PoolChange(w, r.Process.Language, v.Conns)
	}
	if v.Next != "" {
		fmt.Fprintf(w, "Next, to tell by measuring (it sends load to the target): %s\n", v.Next)
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
}

// LiveTimeline writes a window's time line: per sample, the process's
// CPU, the bytes each active connection moved and its limited time, and
// channelz's streams in flight.
func LiveTimeline(w io.Writer, r *result.LiveRecord) {
	fmt.Fprintln(w, "\ntime line (per sample):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "at\tcpu\tconnections (sent/received, limited)\tstreams in flight\tbusiest thread")
	for _, s := range r.Samples {
		var conns, streams []string
		for _, c := range s.Conns {
			conns = append(conns, fmt.Sprintf("#%d %s/%s %v", c.Conn, liveBytes(int64(c.BytesAcked)), liveBytes(int64(c.BytesReceived)), time.Duration(c.LimitedUS)*time.Microsecond))
		}
		for _, st := range s.Streams {
			streams = append(streams, fmt.Sprintf("%d:%d", st.Socket, st.InFlight))
		}
		thread := ""
		if len(s.Threads) > 0 {
			thread = fmt.Sprintf("%s %v", s.Threads[0].Name, time.Duration(s.Threads[0].CPUNS).Round(time.Millisecond))
		}
		fmt.Fprintf(tw, "%v\t%v\t%s\t%s\t%s\n", time.Duration(s.AtNS).Round(time.Millisecond), time.Duration(s.CPUNS).Round(time.Millisecond),
			strings.Join(conns, "  "), strings.Join(streams, " "), thread)
	}
	tw.Flush()
}

// liveBytes formats a byte count or rate in the nearest binary unit.
func liveBytes(n int64) string {
	f := float64(n)
	for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
		if f < 1024 || u == "GiB" {
			if u == "B" {
				return fmt.Sprintf("%.0f %s", f, u)
			}
			return fmt.Sprintf("%.1f %s", f, u)
		}
		f /= 1024
	}
	return ""
}
