// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
)

// OtherCPU is the CPU that other work took from a set of CPUs a step ran
// on: what the kernel counted busy there, less the step's client and
// server, plus what a hypervisor stole.
type OtherCPU struct {
	// CPUs lists the CPUs, ascending.
	CPUs []int
	// Whose says whose CPUs they are: "the client's", "the server's", or
	// "the client's and the server's".
	Whose string
	// Share is the other work's share of those CPUs' time over the step's
	// interval, from 0 to 1.
	Share float64
}

// OtherWork is the CPU other work took over r's interval, per set of
// CPUs the step depended on, from r's host_cpu (nil without it); on a
// sweep on workers, from each worker's (workersOtherWork).
//
// When rpclab pinned the server apart from the client, each side's CPUs
// are read apart: busy time on the client's CPUs less the client's CPU,
// on the server's less the server's (when the server reported it, and
// no netem proxy of the run shares its CPUs). Otherwise one set, the
// client's CPUs (the host's when unpinned), less the client's CPU and the
// server's when the record carries it (a server on another host then
// makes the share smaller, never larger). Where a process of the run
// itself cannot be told from other work there, the record is not judged
// (nil): a netem proxy of the run, or a server on this host (a loopback
// target) that does not report its CPU. The verdict must not blame other
// work for the run's own processes.
func OtherWork(r *result.Record) []OtherCPU {
	if len(r.Workers) > 0 {
		return workersOtherWork(r)
	}
	h := r.HostCPU
	if h == nil || len(h.Client.CPUs) == 0 {
		return nil
	}
	serverNS := int64(-1)
	if r.ServerCPU != nil {
		serverNS = r.ServerCPU.CPUNS
	}
	if h.Server != nil && len(h.Server.CPUs) > 0 && !overlap(h.Client.CPUs, h.Server.CPUs) {
		out := []OtherCPU{{h.Client.CPUs, "the client's", otherShare(h.Client, r.ClientCPUNS)}}
		if serverNS >= 0 && r.Spec.Netem == nil { // lab pins its proxy beside the server
			out = append(out, OtherCPU{h.Server.CPUs, "the server's", otherShare(*h.Server, serverNS)})
		}
		return out
	}
	switch {
	case r.Spec.Netem != nil:
		return nil
	case serverNS >= 0:
		return []OtherCPU{{h.Client.CPUs, "the client's and the server's", otherShare(h.Client, r.ClientCPUNS+serverNS)}}
	case loopback(r.Spec.Target):
		return nil
	}
	return []OtherCPU{{h.Client.CPUs, "the client's", otherShare(h.Client, r.ClientCPUNS)}}
}

// workersOtherWork is, for a step run on workers, each worker's CPUs
// less the worker's own CPU (plus steal), from the host_cpu its
// MarkDetail gave; nil when the target is on loopback (the server then
// shares the workers' host, unseen).
func workersOtherWork(r *result.Record) []OtherCPU {
	if loopback(r.Spec.Target) {
		return nil
	}
	var out []OtherCPU
	for _, w := range r.Workers {
		if w.Status != "ok" || w.HostCPU == nil || len(w.HostCPU.CPUs) == 0 {
			continue
		}
		out = append(out, OtherCPU{w.HostCPU.CPUs, "worker " + w.Addr + "'s", otherShare(*w.HostCPU, w.CPUNS)})
	}
	return out
}

// loopback says whether target ("host:port", maybe behind a "scheme:///")
// is on this host.
func loopback(target string) bool {
	if i := strings.Index(target, ":///"); i >= 0 {
		target = target[i+4:]
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = target
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && (a.IsLoopback() || a.IsUnspecified())
}

// OtherShare is the largest share of OtherWork(r) (0 without it): what the
// step table prints.
func OtherShare(r *result.Record) (share float64, ok bool) {
	ow := OtherWork(r)
	for _, o := range ow {
		share = max(share, o.Share)
	}
	return share, len(ow) > 0
}

// otherShare is (busy - own + steal) over t's time, within [0, 1].
func otherShare(t result.CPUTimes, own int64) float64 {
	total := t.BusyNS + t.IdleNS + t.StealNS
	if total <= 0 {
		return 0
	}
	return min(max(float64(t.BusyNS-own+t.StealNS)/float64(total), 0), 1)
}

func overlap(a, b []int) bool {
	for _, c := range a {
		if slices.Contains(b, c) {
			return true
		}
	}
	return false
}

// HostLoad is what other work took from a group of steps: the in-flight
// counts of the steps where it took more than OtherWorkShare of some of
// their CPUs, and the most it took of each set of CPUs there.
type HostLoad struct {
	Inflights []int
	CPUs      []OtherCPU
}

// Busy is the HostLoad of recs' successful steps (nil when other work
// stayed at or below OtherWorkShare on every step, or no record carries
// the host's CPU).
func Busy(recs []*result.Record) *HostLoad {
	var b HostLoad
	most := map[string]int{} // CPU set -> index in b.CPUs
	for _, r := range recs {
		if r == nil || r.Status != result.StatusOK {
			continue
		}
		hit := false
		for _, o := range OtherWork(r) {
			if o.Share <= OtherWorkShare {
				continue
			}
			hit = true
			k := o.Whose + " " + cpuList(o.CPUs)
			if i, ok := most[k]; ok {
				b.CPUs[i].Share = max(b.CPUs[i].Share, o.Share)
			} else {
				most[k] = len(b.CPUs)
				b.CPUs = append(b.CPUs, o)
			}
		}
		if hit && !slices.Contains(b.Inflights, r.Spec.Inflight) {
			b.Inflights = append(b.Inflights, r.Spec.Inflight)
		}
	}
	if len(b.CPUs) == 0 {
		return nil
	}
	slices.Sort(b.Inflights)
	slices.SortStableFunc(b.CPUs, func(x, y OtherCPU) int { return x.CPUs[0] - y.CPUs[0] })
	return &b
}

// Text says what other work took, first in every judgement of the steps:
// "Other processes took 41% of CPU 0 (the client's) and 38% of CPU 1
// (the server's) during the steps at in-flight 16-32, more than the 25% a
// step may lose to other work: these figures are not the client's or the
// server's; measure again on a quiet machine."
func (b *HostLoad) Text() string {
	parts := make([]string, len(b.CPUs))
	for i, o := range b.CPUs {
		parts[i] = fmt.Sprintf("%.0f%% of %s (%s)", 100*o.Share, cpuName(o.CPUs), o.Whose)
	}
	at := "the step at in-flight " + strconv.Itoa(b.Inflights[0])
	if n := len(b.Inflights); n > 1 {
		at = fmt.Sprintf("the steps at in-flight %d-%d", b.Inflights[0], b.Inflights[n-1])
	}
	return fmt.Sprintf("Other processes took %s during %s, more than the %.0f%% a step may lose to other work: these figures are not the client's or the server's; measure again on a quiet machine.",
		strings.Join(parts, " and "), at, 100*OtherWorkShare)
}

// cpuName is "CPU 0", "CPUs 0-3" or "CPUs 0,2".
func cpuName(cpus []int) string {
	if len(cpus) == 1 {
		return "CPU " + strconv.Itoa(cpus[0])
	}
	if cpus[len(cpus)-1]-cpus[0] == len(cpus)-1 {
		return fmt.Sprintf("CPUs %d-%d", cpus[0], cpus[len(cpus)-1])
	}
	return "CPUs " + cpuList(cpus)
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// restsOnIdleCPU says whether a verdict of kind k reads CPU that was left
// idle (the client's or the server's not full), which other work makes
// meaningless: such a rule never fires on a busy host.
func restsOnIdleCPU(k Kind) bool {
	return k == ClientCPUBound || k == NotServer || k == BoundElsewhere
}

// onBusyHost rewords v, judged on steps where other work took more than
// OtherWorkShare (b): it says so first and becomes BusyHost (Rule keeps
// what the rules said). A rule that rests on idle CPU keeps only what was
// measured (the comparison of the layouts); the others follow, as what
// the rules read from figures that are not the client's or the server's.
// A trap stays a trap: it counts connections, not CPU.
func onBusyHost(v Verdict, b *HostLoad) Verdict {
	v.Busy = b
	if v.Kind == Trap {
		v.Text = b.Text() + " " + v.Text
		return v
	}
	v.Rule = v.Kind
	switch {
	case restsOnIdleCPU(v.Kind) && v.head != "":
		v.Text = b.Text() + " As measured: " + v.head + "."
	case restsOnIdleCPU(v.Kind):
		v.Text = b.Text()
	default:
		v.Text = b.Text() + " What the rules read from these figures: " + v.Text
	}
	v.Kind = BusyHost
	return v
}
