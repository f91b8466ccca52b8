// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"time"

	"google.golang.org/grpc"
)

// Option configures a Pool. Options are applied in order; New validates the
// result and returns an error wrapping ErrInvalidOption for a bad value.
type Option func(*config) error

type config struct {
	size        int
	dialOpts    []grpc.DialOption
	policy      Policy
	lazy        bool
	redialAfter time.Duration
	logger      *slog.Logger

	// dialer is WithDialer's (nil: grpc-go's, or the meter's TCP dial).
	dialer func(context.Context, string) (net.Conn, error)

	sizeSet  bool  // WithSize was given
	adaptive *Rule // nil: a fixed size
	sizer    Sizer // WithSizer's, in place of adaptive's Decide; nil: the Rule's
	// The adaptive control loop's clock and ticker (tests replace them).
	now       func() time.Time
	newTicker func(time.Duration) (<-chan time.Time, func())
	// The host's steal and total CPU time so far (tests replace it: a
	// fake clock's intervals last no real time).
	steal func() (steal, total time.Duration, ok bool)
}

// MaxSize bounds WithSize. Each connection is a TCP connection with its
// own HTTP/2 transport, buffers and goroutines, and a file descriptor:
// 1024 is a process's default soft limit on open files (ulimit -n) and
// far past the 2..8 connections DefaultSize picks (its doc cites the
// measurement).
const MaxSize = 1024

// Bounds of DefaultSize.
const (
	minDefaultSize = 2
	maxDefaultSize = 8
)

// DefaultRedialAfter is how long a connection may stay in
// TRANSIENT_FAILURE before the pool re-creates it, when WithRedialAfter is
// not given.
const DefaultRedialAfter = 5 * time.Second

// maxRedialAfter caps the doubling of the re-dial delay while a target
// stays down.
const maxRedialAfter = 2 * time.Minute

// DefaultSize is the pool size when WithSize is not given: the number of
// CPUs this process may use (runtime.GOMAXPROCS, which follows CPU affinity
// and cgroup limits), clamped to 2..8.
//
// Why: grpc-go reads each HTTP/2 connection on one goroutine and writes it
// on another, so one connection keeps at most about one core busy with
// framing; a connection per usable CPU lets every core frame in parallel.
// More connections than CPUs add no parallelism and split the RPCs into
// smaller write batches, which costs CPU per RPC: on a 2-core machine with
// the client pinned to one core, rpclab sweep at in-flight 64 measured a
// median client CPU per RPC of 13.5 µs on one connection, 14.0 µs with 2,
// 15.8 µs with 4, 16.3 µs with 8 and 24.9 µs with one connection per
// worker. At least 2, so that one broken or stalled connection never leaves
// the pool without a ready one (2 cost 4% more CPU per RPC than 1); at most
// 8, because each connection costs the server memory and a file
// descriptor. Only the one-core end of this rule was measured (see the
// README); size a pool for a many-core client with rpclab sweep.
func DefaultSize() int {
	return clampSize(runtime.GOMAXPROCS(0))
}

func clampSize(n int) int {
	return min(max(n, minDefaultSize), maxDefaultSize)
}

func defaultConfig() *config {
	return &config{
		size:        DefaultSize(),
		policy:      RoundRobin,
		redialAfter: DefaultRedialAfter,
		logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		now:         time.Now,
		newTicker: func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		},
		steal: hostSteal,
	}
}

func (c *config) validate() error {
	if c.size < 1 {
		return fmt.Errorf("%w: size %d must be at least 1", ErrInvalidOption, c.size)
	}
	if c.size > MaxSize {
		return fmt.Errorf("%w: size %d is above %d (MaxSize)", ErrInvalidOption, c.size, MaxSize)
	}
	if c.policy != RoundRobin && c.policy != LeastLoaded {
		return fmt.Errorf("%w: unknown pick policy %v", ErrInvalidOption, c.policy)
	}
	if c.redialAfter <= 0 {
		return fmt.Errorf("%w: redial delay %v must be positive", ErrInvalidOption, c.redialAfter)
	}
	if c.adaptive != nil {
		if c.sizeSet {
			return fmt.Errorf("%w: WithSize and WithAdaptive both given (an adaptive pool sizes itself)", ErrInvalidOption)
		}
		if err := c.adaptive.validate(); err != nil {
			return err
		}
		c.size = c.adaptive.Min
	}
	return nil
}

// WithSize sets the number of connections (default DefaultSize()). New
// rejects values below 1 or above MaxSize.
func WithSize(n int) Option {
	return func(c *config) error { c.size, c.sizeSet = n, true; return nil }
}

// WithAdaptive makes the pool size itself between minConns and maxConns
// connections, by DefaultRule(minConns, maxConns). It starts with minConns.
// Once per second it measures, per connection, the RPCs in flight, how
// long RPCs wait in the client before their connection's next socket
// write, and the RPCs completed, and the process's CPU use. It adds one
// connection on trial when RPCs wait to be written or, as a probe, when
// more than one RPC is in flight per connection (and, after a trial that
// paid, while more than one RPC is in flight at all). It measures a trial
// paired: for 4 s it runs with the new connection, then without it (the
// connection parked: no new RPC picks it), then without, then with, and
// compares the two sizes' throughputs side by side, so the host's drift
// weighs on both alike. It keeps the connection if throughput rose (or,
// for a measured wait, the wait went away while the CPU stayed free); a
// probe that held the throughput without raising it is kept on trust and
// the next one probed at once (Rule.PlateauSteps), each judged against
// the size from before the climb, and every connection on trust given
// back if the top did not gain. A failed trial doubles the back-off. The
// pool retires one connection after it has sat idle. A new connection
// takes RPCs only once READY; a retired one takes no new RPC and closes
// when its last RPC ends. Stats().Events tells every decision and why, and
// on each decision that judged a trial the two throughputs.
//
// To time socket writes the pool dials each connection itself, over TCP
// or a Unix socket, or with the caller's WithDialer, and wraps the
// net.Conn (grpc.WithContextDialer, placed before the caller's dial
// options). A grpc.WithContextDialer of the caller's in WithDialOptions
// replaces it: RPCs then run, but the pool sees no write wait and grows
// only on probes; pass such a dialer as WithDialer. As with any custom
// dialer, grpc-go then applies no proxy from the environment.
//
// A pool without WithSize or WithAdaptive keeps a fixed DefaultSize():
// the adaptive mode is not the default until measurements show it matches
// the best fixed size at every load (scripts/adaptive.sh; the README has
// the figures). New rejects minConns < 1,
// maxConns < minConns, and WithAdaptive together with WithSize.
func WithAdaptive(minConns, maxConns int) Option {
	return func(c *config) error {
		r := DefaultRule(minConns, maxConns)
		c.adaptive, c.sizer = &r, nil
		return nil
	}
}

// WithAdaptiveRule is WithAdaptive with every threshold of the rule given
// (Rule's fields document their defaults). New validates it as
// WithAdaptive's bounds.
func WithAdaptiveRule(r Rule) Option {
	return func(c *config) error { c.adaptive, c.sizer = &r, nil; return nil }
}

// WithSizer makes the pool adaptive, between minConns and maxConns
// connections (starting with minConns), sized by s in place of rpclab's
// Rule: s decides once per interval from the same signals (see Sizer). It
// is the hook for comparing other pools' policies with Rule on the same
// pool (bench/peers); most users want WithAdaptive. New rejects a nil s,
// minConns < 1, maxConns < minConns, interval <= 0, and WithSizer together
// with WithSize.
func WithSizer(minConns, maxConns int, interval time.Duration, s Sizer) Option {
	return func(c *config) error {
		if s == nil {
			return fmt.Errorf("%w: nil Sizer", ErrInvalidOption)
		}
		r := DefaultRule(minConns, maxConns)
		r.Interval = interval
		c.adaptive, c.sizer = &r, s
		return nil
	}
}

// WithDialOptions passes options to grpc.NewClient for every connection:
// credentials, interceptors, keepalive, a custom dialer. Nothing is assumed
// or hard-coded: as with grpc.NewClient, credentials must be given (for
// plaintext, grpc.WithTransportCredentials(insecure.NewCredentials())).
// Options accumulate over several calls. Interceptors see the pool's
// ClientConn for each RPC, so they can tell the connections apart.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) error { c.dialOpts = append(c.dialOpts, opts...); return nil }
}

// WithPolicy sets how an RPC picks its connection (default RoundRobin).
func WithPolicy(p Policy) Option {
	return func(c *config) error { c.policy = p; return nil }
}

// WithLazy makes New only create the connections; each one dials on the
// first RPC routed to it and, as grpc-go does by default, goes idle after
// grpc-go's idle timeout. Without it (the default, eager) New starts
// dialling every connection at once without waiting, and the pool
// reconnects a connection whenever it goes idle, so RPCs rarely pay for a
// handshake. Either way, Connect dials every connection and waits for it.
func WithLazy() Option {
	return func(c *config) error { c.lazy = true; return nil }
}

// WithRedialAfter sets how long a connection may stay in
// TRANSIENT_FAILURE before the pool replaces it with a new ClientConn
// (fresh name resolution, fresh back-off); default DefaultRedialAfter. While
// the target stays down the delay doubles after each replacement, up to 2
// minutes, and returns to d once the connection is ready. grpc-go keeps
// retrying inside each ClientConn meanwhile; the replacement bounds how
// long its growing back-off can keep a recovered target unused. New rejects
// d <= 0.
func WithRedialAfter(d time.Duration) Option {
	return func(c *config) error { c.redialAfter = d; return nil }
}

// WithLogger sets where the pool logs connection replacements (default:
// discarded). Nothing is logged on the RPC path.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidOption)
		}
		c.logger = l
		return nil
	}
}

// WithDialer makes every connection of the pool dial with dial (addr is
// as grpc.WithContextDialer gets it), in place of grpc-go's dialer: a
// fixed pool passes it as grpc.WithContextDialer; an adaptive one wraps
// the net.Conn it returns to time socket writes (WithAdaptive), which a
// grpc.WithContextDialer of the caller's in WithDialOptions would
// replace. nil is an error.
func WithDialer(dial func(ctx context.Context, addr string) (net.Conn, error)) Option {
	return func(c *config) error {
		if dial == nil {
			return fmt.Errorf("%w: WithDialer: nil dialer", ErrInvalidOption)
		}
		c.dialer = dial
		return nil
	}
}
