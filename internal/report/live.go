// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// LiveSection shows live records (rpclab doctor --pid): each window's
// connections, CPU and channelz, and its verdict.
type LiveSection struct{ Records []result.LiveRecord }

var _ Section = LiveSection{}

// Kind is result.KindLive.
func (LiveSection) Kind() string { return result.KindLive }

// Table writes each window as LiveText prints it, and its time line.
func (s LiveSection) Table(w io.Writer) error {
	for i := range s.Records {
		if i > 0 {
			fmt.Fprintln(w)
		}
		LiveText(w, &s.Records[i])
		LiveTimeline(w, &s.Records[i])
	}
	return nil
}

// Charts returns each window's time lines, named "live-<pid>-<n>-bytes"
// (each connection's bytes a second, the 8 busiest), "-cpu" (the
// process's and its busiest thread's CPU) and, with channelz, "-streams"
// (each socket's streams in flight).
func (s LiveSection) Charts() []Chart {
	var out []Chart
	for i := range s.Records {
		r := &s.Records[i]
		name := fmt.Sprintf("live-%d-%d", r.Process.PID, i+1)
		out = append(out, Chart{Name: name + "-bytes", Figure: liveBytesFigure(r)}, Chart{Name: name + "-cpu", Figure: liveCPUFigure(r)})
		if f, ok := liveStreamsFigure(r); ok {
			out = append(out, Chart{Name: name + "-streams", Figure: f})
		}
	}
	return out
}

func (s LiveSection) html() (template.HTML, error) {
	return kindHTML(s, fmt.Sprintf("Live processes (rpclab doctor --pid): %d windows", len(s.Records)),
		"Each window: the connections the kernel saw, the CPU, channelz, the verdict and its time line (docs/live.md).")
}

// liveBytesFigure charts the 8 connections that moved the most bytes.
func liveBytesFigure(r *result.LiveRecord) Figure {
	f := Figure{Kind: "live-bytes", Title: fmt.Sprintf("pid %d (%s): bytes a second per connection", r.Process.PID, r.Process.Comm),
		XLabel: "seconds", YLabel: "KiB/s sent + received"}
	idx := make([]int, len(r.Conns))
	for i := range idx {
		idx[i] = i
	}
	moved := func(i int) uint64 { return r.Conns[i].BytesAcked + r.Conns[i].BytesReceived }
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(moved(b), moved(a)) })
	series := map[int]int{}
	for _, c := range idx[:min(len(idx), 8)] {
		series[c] = len(f.Series)
		f.Series = append(f.Series, Series{Label: r.Conns[c].Local + " -> " + r.Conns[c].Remote, Color: len(f.Series), Shape: len(f.Series)})
	}
	prev := int64(0)
	for _, smp := range r.Samples {
		secs := float64(smp.AtNS-prev) / 1e9
		prev = smp.AtNS
		if secs <= 0 {
			continue
		}
		for _, c := range smp.Conns {
			if j, ok := series[c.Conn]; ok {
				f.Series[j].Points = append(f.Series[j].Points, Point{X: liveX(smp.AtNS), Y: float64(c.BytesAcked+c.BytesReceived) / 1024 / secs})
			}
		}
	}
	return f
}

// liveCPUFigure charts the process's CPU and its busiest thread's.
func liveCPUFigure(r *result.LiveRecord) Figure {
	f := Figure{Kind: "live-cpu", Title: fmt.Sprintf("pid %d (%s): CPU (of %.2f it may use)", r.Process.PID, r.Process.Comm, r.CPU.AllowedCPUs),
		XLabel: "seconds", YLabel: "CPUs", Series: []Series{{Label: "process"}, {Label: "busiest thread", Color: 1, Shape: 1}}}
	prev := int64(0)
	for _, smp := range r.Samples {
		secs := float64(smp.AtNS-prev) / 1e9
		prev = smp.AtNS
		if secs <= 0 {
			continue
		}
		x := liveX(smp.AtNS)
		f.Series[0].Points = append(f.Series[0].Points, Point{X: x, Y: float64(smp.CPUNS) / 1e9 / secs})
		top := 0.0
		if len(smp.Threads) > 0 {
			top = float64(smp.Threads[0].CPUNS) / 1e9 / secs
		}
		f.Series[1].Points = append(f.Series[1].Points, Point{X: x, Y: top})
	}
	return f
}

// liveStreamsFigure charts each channelz socket's streams in flight.
func liveStreamsFigure(r *result.LiveRecord) (Figure, bool) {
	f := Figure{Kind: "live-streams", Title: fmt.Sprintf("pid %d (%s): streams in flight per socket (channelz)", r.Process.PID, r.Process.Comm),
		XLabel: "seconds", YLabel: "streams in flight"}
	series := map[int64]int{}
	for _, smp := range r.Samples {
		for _, st := range smp.Streams {
			j, ok := series[st.Socket]
			if !ok {
				j = len(f.Series)
				series[st.Socket] = j
				f.Series = append(f.Series, Series{Label: fmt.Sprintf("socket %d", st.Socket), Color: j, Shape: j})
			}
			f.Series[j].Points = append(f.Series[j].Points, Point{X: liveX(smp.AtNS), Y: float64(st.InFlight)})
		}
	}
	return f, len(f.Series) > 0
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
	found := ""
	if cz.Found {
		found = " (found: a listening port of the process)"
	}
	fmt.Fprintf(w, "channelz %s%s: %d channels, %d subchannels, %d sockets\n", cz.Addr, found, len(cz.Channels), len(cz.Subchannels), len(cz.Sockets))
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
	if d := time.Duration(r.DurationNS); r.SamplerCPUNS > 0 && d > 0 {
		fmt.Fprintf(w, "Sampling took %v of rpclab's CPU over the %v window (%.2f%% of one CPU).\n",
			time.Duration(r.SamplerCPUNS).Round(time.Millisecond/10), d.Round(time.Millisecond), 100*float64(r.SamplerCPUNS)/float64(d))
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

// liveX is a sample's time in seconds, to a tenth (the charts' ticks).
func liveX(atNS int64) float64 { return math.Round(float64(atNS)/1e8) / 10 }
