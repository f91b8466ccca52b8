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

	"go.opentelemetry.io/otel/metric"
	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/pool/internal/adapt"
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

	// Growth at the server's stream limit (WithStreamLimit): off while
	// streamLimit is 0.
	streamLimit   int
	maxConns      int
	growthIdle    time.Duration
	growthIdleSet bool // WithGrowthIdle was given

	// meters is WithMeterProvider's (default: OpenTelemetry's global).
	meters metric.MeterProvider

	sizeSet  bool        // WithSize was given
	adaptive bool        // sized by rule (or sizer) between its Min and Max
	rule     adapt.Rule  // WithAdaptive's, or pool/adaptive's
	sizer    adapt.Sizer // pool/adaptive's WithSizer, in place of rule's policy; nil: the rule's
	// The adaptive control loop's clock and ticker (tests replace them).
	now       func() time.Time
	newTicker func(time.Duration) (<-chan time.Time, func())
	// The host's steal and total CPU time so far (tests replace it: a
	// fake clock's intervals last no real time).
	steal func() (steal, total time.Duration, ok bool)
}

// MaxSize bounds every way of sizing a pool: WithSize and WithAdaptive's
// max. Each connection is a TCP connection with its own HTTP/2 transport,
// buffers and goroutines, and a file descriptor: 1024 is a process's
// default soft limit on open files (ulimit -n) and far past the 2..8
// connections DefaultSize picks.
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

// DefaultGrowthIdle is how long a connection added by WithStreamLimit
// may carry no RPC before the pool closes it, when WithGrowthIdle is not
// given.
const DefaultGrowthIdle = 30 * time.Second

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
// descriptor. Only the one-core end of this rule was measured; size a
// pool for a many-core client with rpclab sweep, or use WithAdaptive.
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
		growthIdle:  DefaultGrowthIdle,
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
	if c.streamLimit != 0 || c.maxConns != 0 {
		if c.adaptive {
			return fmt.Errorf("%w: WithStreamLimit and WithAdaptive both given (choose one way to add connections)", ErrInvalidOption)
		}
		if c.streamLimit < 1 {
			return fmt.Errorf("%w: WithStreamLimit: streams per connection %d must be at least 1", ErrInvalidOption, c.streamLimit)
		}
		if c.maxConns < c.size {
			return fmt.Errorf("%w: WithStreamLimit: max connections %d is below the size %d", ErrInvalidOption, c.maxConns, c.size)
		}
		if c.maxConns > MaxSize {
			return fmt.Errorf("%w: WithStreamLimit: max connections %d is above %d (MaxSize)", ErrInvalidOption, c.maxConns, MaxSize)
		}
	} else if c.growthIdleSet {
		return fmt.Errorf("%w: WithGrowthIdle without WithStreamLimit (only grown connections retire)", ErrInvalidOption)
	}
	if c.growthIdle <= 0 {
		return fmt.Errorf("%w: WithGrowthIdle: idle time %v must be positive", ErrInvalidOption, c.growthIdle)
	}
	if c.adaptive {
		if c.sizeSet {
			return fmt.Errorf("%w: WithSize and WithAdaptive both given (an adaptive pool sizes itself)", ErrInvalidOption)
		}
		if err := c.rule.Validate(MaxSize); err != nil {
			return fmt.Errorf("%w: WithAdaptive %v", ErrInvalidOption, err)
		}
		c.size = c.rule.Min
	}
	return nil
}

// WithSize sets the number of connections (default DefaultSize()). New
// rejects values below 1 or above MaxSize, and WithSize together with
// WithAdaptive.
func WithSize(n int) Option {
	return func(c *config) error { c.size, c.sizeSet = n, true; return nil }
}

// WithAdaptive makes the pool size itself between minConns and maxConns
// connections, starting with minConns, by the policy in the package doc:
// it adds a connection when RPCs wait to be written or queue on the
// connections, keeps it only if a paired trial measures a gain, and gives connections back once the RPCs
// in flight would fit one connection fewer, at most one each. Without it the pool keeps a fixed
// size. Stats().Events tells every decision and why. New rejects
// minConns < 1, maxConns < minConns, maxConns > MaxSize, and
// WithAdaptive together with WithSize.
//
// To time socket writes the pool dials each connection itself, over TCP
// or a Unix socket, or with WithDialer's dialer, and wraps the net.Conn.
// A grpc.WithContextDialer in WithDialOptions replaces that wrapper: RPCs
// run, but the pool sees no write wait and grows only on a queue; pass such a
// dialer as WithDialer. As with any custom dialer, grpc-go then applies
// no proxy from the environment.
func WithAdaptive(minConns, maxConns int) Option {
	return func(c *config) error {
		c.adaptive, c.rule, c.sizer = true, adapt.DefaultRule(minConns, maxConns), nil
		return nil
	}
}

func init() {
	adapt.NewOption = func(r adapt.Rule, s adapt.Sizer, sizer bool) any {
		return Option(func(c *config) error {
			if sizer && s == nil {
				return fmt.Errorf("%w: nil Sizer", ErrInvalidOption)
			}
			c.adaptive, c.rule, c.sizer = true, r, s
			return nil
		})
	}
}

// WithDialOptions passes options to grpc.NewClient for every connection:
// credentials, interceptors, keepalive, a custom dialer. Nothing is assumed
// or hard-coded: as with grpc.NewClient, credentials must be given (for
// plaintext, grpc.WithTransportCredentials(insecure.NewCredentials())).
// Options accumulate over several calls (default: none). Interceptors see
// the pool's ClientConn for each RPC, so they can tell the connections
// apart. A bad option fails New with an error wrapping ErrDial.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) error { c.dialOpts = append(c.dialOpts, opts...); return nil }
}

// WithPolicy sets how an RPC picks its connection (default RoundRobin).
// New rejects a Policy that is neither RoundRobin nor LeastLoaded.
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

// WithStreamLimit turns on growth at the server's stream limit: a server
// or proxy often lets one HTTP/2 connection carry only so many streams
// at once (SETTINGS_MAX_CONCURRENT_STREAMS, often 100 or 128), and
// grpc-go queues the RPCs past it inside the client, silently. With
// growth on, an RPC goes to a connection with fewer than streamsPerConn
// RPCs in flight, chosen by the pick policy among those; when every
// connection carries streamsPerConn, the pool adds a connection, up to
// maxConns in all, and the RPC goes to it. At maxConns the policy picks
// among all connections and the RPC waits in grpc-go for a free stream.
// A connection added this way that carries no RPC for the idle time
// (WithGrowthIdle, default DefaultGrowthIdle) is closed; the pool never
// shrinks below its size (WithSize).
//
// streamsPerConn is the server's limit as configured here: grpc-go does
// not expose the peer's MAX_CONCURRENT_STREAMS outside its internals, so
// the pool does not learn it. Give the limit the server announces (for
// grpc-go servers, grpc.MaxConcurrentStreams; the default is unlimited,
// where growth is not needed).
//
// Off by default: the size is fixed. New rejects streamsPerConn < 1,
// maxConns below the size or above MaxSize, and WithStreamLimit together
// with WithAdaptive. maxConns equal to the size keeps the size fixed
// (and the pick still prefers connections below the limit).
func WithStreamLimit(streamsPerConn, maxConns int) Option {
	return func(c *config) error { c.streamLimit, c.maxConns = streamsPerConn, maxConns; return nil }
}

// WithGrowthIdle sets how long a connection added by WithStreamLimit may
// carry no RPC before the pool closes it (default DefaultGrowthIdle). New
// rejects d <= 0, and WithGrowthIdle without WithStreamLimit.
func WithGrowthIdle(d time.Duration) Option {
	return func(c *config) error { c.growthIdle, c.growthIdleSet = d, true; return nil }
}

// WithMeterProvider sets where the pool reports its OpenTelemetry metrics.
// Default: otel.GetMeterProvider(), the global provider, which is a no-op
// until the application installs one (before or after New). nil is an
// error. The meter is named "github.com/rpclab/rpclab/pool", with the
// module's version as the build records it:
//
//	rpclab.pool.size      UpDownCounter  {connection}  rpclab.pool.target
//	rpclab.pool.inflight  UpDownCounter  {request}     rpclab.pool.target, rpclab.pool.connection
//	rpclab.pool.picks     Counter        {pick}        rpclab.pool.target, rpclab.pool.connection
//	rpclab.pool.redials   Counter        {redial}      rpclab.pool.target
//	rpclab.pool.resizes   Counter        {resize}      rpclab.pool.target, rpclab.pool.direction
//
// rpclab.pool.connection is the connection's index (0..size-1, then the
// added ones, an index reused once its connection retired);
// rpclab.pool.direction is "grow" or "shrink" (growth at the stream limit
// and WithAdaptive both count). inflight and picks are asynchronous
// (observable) instruments, read at collection from the counters the pick
// keeps anyway; they export as the same sums. size returns to 0 at Close.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: nil MeterProvider", ErrInvalidOption)
		}
		c.meters = mp
		return nil
	}
}
