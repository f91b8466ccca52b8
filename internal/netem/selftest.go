// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/usage"
)

// SelfTestConfig says what SelfTest measures.
type SelfTestConfig struct {
	// RTTs are the emulated round-trip times to check (each direction gets
	// half). 0 measures the emulator's own cost.
	RTTs []time.Duration
	// Pings is the most round trips measured per RTT; Budget bounds the
	// time spent per RTT.
	Pings  int
	Budget time.Duration
	// BulkBytes are sent one way directly, then through the proxy at 0
	// delay, to measure the proxy's CPU per byte (0: skip).
	BulkBytes int64
}

// SelfTestPoint is the accuracy at one emulated RTT.
type SelfTestPoint struct {
	SetRTTNS int64 `json:"set_rtt_ns"`
	Pings    int   `json:"pings"`
	// MedianRTTNS and P99RTTNS are the round trips measured through the
	// proxy.
	MedianRTTNS int64 `json:"median_rtt_ns"`
	P99RTTNS    int64 `json:"p99_rtt_ns"`
	// ErrorNS is the median through the proxy minus the direct median minus
	// the set RTT: what the emulator adds beyond what it was asked for.
	ErrorNS    int64 `json:"error_ns"`
	ErrorP99NS int64 `json:"error_p99_ns"`
}

// SelfTestResult is what SelfTest measured.
type SelfTestResult struct {
	// DirectRTTNS is the median round trip of a 64-byte ping on loopback
	// without the proxy; DirectP99NS its 99th percentile.
	DirectRTTNS int64           `json:"direct_rtt_ns"`
	DirectP99NS int64           `json:"direct_p99_ns"`
	Points      []SelfTestPoint `json:"points"`
	// BulkBytes were sent one way, directly and through the proxy, with
	// the process's CPU time and the throughput of each.
	BulkBytes     int64   `json:"bulk_bytes,omitempty"`
	DirectCPUNS   int64   `json:"direct_cpu_ns,omitempty"`
	ProxyCPUNS    int64   `json:"proxy_cpu_ns,omitempty"`
	DirectBps     float64 `json:"direct_bps,omitempty"`
	ProxyBps      float64 `json:"proxy_bps,omitempty"`
	CPUNSPerGiB   float64 `json:"proxy_cpu_ns_per_gib,omitempty"`
	ProxyVsDirect float64 `json:"proxy_time_ratio,omitempty"`
}

const pingSize = 64

// ErrBadSelfTest is the setting SelfTestConfig.Validate's *usage.Error names.
var ErrBadSelfTest = errors.New("netem: selftest")

// Validate reports the first bad field of c.
func (c SelfTestConfig) Validate() error {
	if c.Pings < 1 {
		return usage.Errorf(ErrBadSelfTest, "pings must be at least 1")
	}
	if c.Budget <= 0 {
		return usage.Errorf(ErrBadSelfTest, "budget must be positive")
	}
	for _, r := range c.RTTs {
		if r < 0 {
			return usage.Errorf(ErrBadSelfTest, "negative RTT %v", r)
		}
	}
	return nil
}

// SelfTest measures the emulator against loopback: the round trip of a
// 64-byte ping directly and through a Proxy at each RTT, and the CPU the
// proxy spends per GiB. It runs in this process, so its figures include
// the client and server it starts.
func SelfTest(ctx context.Context, cfg SelfTestConfig) (*SelfTestResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	echo, err := startEcho()
	if err != nil {
		return nil, err
	}
	defer echo.Close()

	res := &SelfTestResult{}
	direct, err := pings(ctx, echo.Addr().String(), cfg.Pings, cfg.Budget)
	if err != nil {
		return nil, fmt.Errorf("netem: selftest: direct: %w", err)
	}
	res.DirectRTTNS, res.DirectP99NS = quantile(direct, 0.5), quantile(direct, 0.99)
	for _, rtt := range cfg.RTTs {
		p, err := Listen("127.0.0.1:0", echo.Addr().String(), Symmetric(Link{Delay: rtt / 2}))
		if err != nil {
			return nil, err
		}
		go p.Serve(ctx)
		d, err := pings(ctx, p.Addr().String(), cfg.Pings, cfg.Budget)
		p.Close()
		if err != nil {
			return nil, fmt.Errorf("netem: selftest: rtt %v: %w", rtt, err)
		}
		pt := SelfTestPoint{SetRTTNS: int64(rtt), Pings: len(d), MedianRTTNS: quantile(d, 0.5), P99RTTNS: quantile(d, 0.99)}
		pt.ErrorNS = pt.MedianRTTNS - res.DirectRTTNS - int64(rtt)
		pt.ErrorP99NS = pt.P99RTTNS - res.DirectP99NS - int64(rtt)
		res.Points = append(res.Points, pt)
	}
	if cfg.BulkBytes > 0 {
		if err := bulk(ctx, res, cfg.BulkBytes); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// startEcho serves TCP echo (pings) and discard-to-EOF (bulk: it answers
// one byte at EOF) on loopback.
func startEcho() (net.Listener, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netem: selftest: %w", err)
	}
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				setNoDelay(c)
				io.Copy(c, c)
			}()
		}
	}()
	return lis, nil
}

// pings measures round trips of a 64-byte message on one connection.
func pings(ctx context.Context, addr string, n int, budget time.Duration) ([]time.Duration, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	setNoDelay(c)
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	buf := make([]byte, pingSize)
	out := make([]time.Duration, 0, n)
	end := time.Now().Add(budget)
	for i := 0; i < n+5 && time.Now().Before(end); i++ {
		t := time.Now()
		if _, err := c.Write(buf); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return nil, err
		}
		if i >= 5 { // the first round trips warm up
			out = append(out, time.Since(t))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no round trip within %v", budget)
	}
	return out, nil
}

func quantile(d []time.Duration, q float64) int64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return int64(s[min(len(s)-1, int(q*float64(len(s))))])
}

// bulk sends n bytes to an echo server (which sends them back) directly
// and through a 0-delay proxy, and records the process's CPU for each.
func bulk(ctx context.Context, res *SelfTestResult, n int64) error {
	sink, err := startEcho()
	if err != nil {
		return err
	}
	defer sink.Close()
	run := func(addr string) (cpu, wall time.Duration, err error) {
		c0, _ := procstat.CPUTime(0)
		t := time.Now()
		if err := sendRecv(ctx, addr, n); err != nil {
			return 0, 0, err
		}
		wall = time.Since(t)
		c1, _ := procstat.CPUTime(0)
		return c1 - c0, wall, nil
	}
	dcpu, dwall, err := run(sink.Addr().String())
	if err != nil {
		return fmt.Errorf("netem: selftest: bulk direct: %w", err)
	}
	p, err := Listen("127.0.0.1:0", sink.Addr().String(), Network{})
	if err != nil {
		return err
	}
	defer p.Close()
	go p.Serve(ctx)
	pcpu, pwall, err := run(p.Addr().String())
	if err != nil {
		return fmt.Errorf("netem: selftest: bulk through the proxy: %w", err)
	}
	res.BulkBytes = n
	res.DirectCPUNS, res.ProxyCPUNS = int64(dcpu), int64(pcpu)
	res.DirectBps = float64(n) * 8 / dwall.Seconds()
	res.ProxyBps = float64(n) * 8 / pwall.Seconds()
	// The bytes cross the proxy twice (there and back).
	res.CPUNSPerGiB = float64(pcpu-dcpu) / (2 * float64(n) / (1 << 30))
	res.ProxyVsDirect = pwall.Seconds() / dwall.Seconds()
	return nil
}

// sendRecv writes n bytes to an echo server and reads them back.
func sendRecv(ctx context.Context, addr string, n int64) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	errc := make(chan error, 1)
	go func() {
		buf := make([]byte, 256<<10)
		var err error
		for left := n; left > 0 && err == nil; {
			k := min(left, int64(len(buf)))
			_, err = c.Write(buf[:k])
			left -= k
		}
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		errc <- err
	}()
	got, err := io.Copy(io.Discard, c)
	if werr := <-errc; werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("got %d bytes back, want %d", got, n)
	}
	return ctx.Err()
}
