// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
)

// Proxy is rpclab's netem proxy ("rpclab netem") running as a child
// process in front of an upstream address.
type Proxy struct {
	// Addr is where clients connect.
	Addr string
	// Upstream is the address behind the emulated link.
	Upstream string
	// Pid is the proxy's process id.
	Pid int
	// Network is the emulated network.
	Network netem.Network
	// Spec is Network as a record describes it.
	Spec *result.NetemSpec
	p    *server.Process
}

// Stop stops the proxy; it is safe to call more than once.
func (p *Proxy) Stop() { _ = p.p.Stop() }

// Proxy starts a netem proxy with the session's network (WithNetem) in
// front of upstream; Close stops it. When this process is pinned, the
// proxy gets the other CPUs (the server's side), so the client's CPU
// figures stay the client's.
func (s *Session) Proxy(ctx context.Context, upstream string) (*Proxy, error) {
	if s.cfg.network == nil {
		return nil, fmt.Errorf("%w: a proxy without a network (WithNetem)", ErrInvalidOption)
	}
	n := *s.cfg.network
	argv := append([]string{s.cfg.exe, "netem", "--listen", "127.0.0.1:0", "--upstream", upstream}, NetemArgs(n, s.cfg.queue)...)
	if len(s.ClientCPUs) > 0 {
		var rest []string
		for c := 0; c < runtime.NumCPU(); c++ {
			if !slices.Contains(s.ClientCPUs, c) {
				rest = append(rest, strconv.Itoa(c))
			}
		}
		if len(rest) > 0 {
			argv = append(argv, "--cpus", strings.Join(rest, ","))
		}
	}
	sp, err := server.StartProcess(ctx, argv, nil, s.cfg.startTimeout)
	if err != nil {
		return nil, fmt.Errorf("lab: netem proxy: %w", err)
	}
	p := &Proxy{Addr: sp.Addr, Upstream: upstream, Pid: sp.Pid, Network: n, Spec: NetemSpec(n, upstream), p: sp}
	s.mu.Lock()
	s.proxies = append(s.proxies, p)
	s.mu.Unlock()
	s.cfg.progress(Event{Kind: ProxyStarted, Addr: p.Addr, Upstream: upstream, Pid: p.Pid, Network: n})
	return p, nil
}

// NetemArgs gives n back as the flags of "rpclab netem". An unlimited
// up link gives no --rate (the command refuses a rate of 0); --down-rate
// 0 is an unlimited down link.
func NetemArgs(n netem.Network, queue int) []string {
	args := []string{"--delay", n.Up.Delay.String(), "--jitter", n.Up.Jitter.String()}
	if n.Up.RateBps > 0 {
		args = append(args, "--rate", result.FormatRate(n.Up.RateBps))
	}
	return append(args,
		"--down-delay", n.Down.Delay.String(), "--down-jitter", n.Down.Jitter.String(), "--down-rate", result.FormatRate(n.Down.RateBps),
		"--netem-queue", strconv.Itoa(queue))
}

// NetemSpec is n as a result record describes it, in front of upstream.
func NetemSpec(n netem.Network, upstream string) *result.NetemSpec {
	link := func(l netem.Link) result.NetemLink {
		return result.NetemLink{DelayNS: int64(l.Delay), JitterNS: int64(l.Jitter), RateBps: l.RateBps}
	}
	return &result.NetemSpec{Up: link(n.Up), Down: link(n.Down), Upstream: upstream}
}
