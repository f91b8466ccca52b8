// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package pool spreads RPCs over several gRPC connections to one target.
//
// One grpc.ClientConn multiplexes every RPC over a single HTTP/2 connection,
// and on a fast network that connection, not the server, caps throughput.
// gRPC's performance guide advises a pool of channels; grpc-go leaves the
// spreading to the caller. A Pool holds several ClientConns and picks one per
// RPC. *Pool implements grpc.ClientConnInterface, so generated stubs take it
// where they took a *grpc.ClientConn:
//
//	p, err := pool.New("dns:///backend:443",
//		pool.WithDialOptions(grpc.WithTransportCredentials(creds)))
//	if err != nil { ... }
//	defer p.Close()
//	client := pb.NewFooClient(p)
//
// # Picking
//
// RoundRobin (the default) takes the connections in turn; LeastLoaded takes
// the less busy of two random connections, counting RPCs in flight, so a
// connection whose server side stalls stops receiving RPCs. Neither takes a
// lock: the pick reads atomics only. A unary RPC is in flight until Invoke
// returns; a stream is in flight from NewStream until it ends (its status is
// received, it fails, or its context ends), and it stays on the connection
// it was opened on.
//
// # Health
//
// A background goroutine per connection follows its connectivity state. The
// pick skips connections that are CONNECTING, in TRANSIENT_FAILURE or
// SHUTDOWN while another one is READY or IDLE; when none is, the RPC goes where
// the policy points and grpc-go fails it fast with UNAVAILABLE (or holds it,
// for grpc.WaitForReady). A connection that stays in TRANSIENT_FAILURE for
// WithRedialAfter, or that someone else shut down, is replaced by a new
// ClientConn in the background; RPCs still running on the old one finish
// there before it is closed.
//
// A connection whose peer hangs with the socket open stays READY: only
// LeastLoaded notices it, through the RPCs piling up on it, and only while
// they stay in flight (an RPC with a deadline leaves at its deadline). To
// have such a connection closed and re-made, pass grpc.WithKeepaliveParams
// in WithDialOptions.
//
// # Options
//
// Every option has a documented default: DefaultSize() connections (derived
// from the CPU count), RoundRobin, eager dialling, DefaultRedialAfter. The
// caller's grpc.DialOptions are passed to every connection unchanged; the
// pool adds none, not even credentials, except that an adaptive pool puts
// its own grpc.WithContextDialer first, to time socket writes (see
// WithAdaptive); a dialer of the caller's goes in WithDialer, which it
// wraps.
//
// # Adaptive size
//
// WithAdaptive(min, max) makes the pool size itself. Once a second it
// reads, per connection, the RPCs in flight, the RPCs completed and how
// long RPCs waited before the connection's next socket write. A
// connection may be the limit when more than one RPC is in flight per
// connection and RPCs waited 100µs or more to be written, or when the RPCs
// in flight exceed one per connection by half an RPC on the mean (they
// queue on a connection, as behind a server's limit of one stream per
// connection, where no write waits): the pool adds one connection and
// puts it on trial. For 12 seconds it runs in blocks of four seconds with the new
// connection, without it (parked: no new RPC picks it), without, and
// with again, so the host's drift weighs on both sides alike. It keeps
// the connection only if the throughput with it beat the throughput
// without by 5% (and by half that in the first halves of the blocks and
// in their second halves alike), or the
// RPCs' time in flight fell as much; otherwise it gives it back and waits
// a back-off that doubles from 5s to 5 minutes. Seconds in which the host's steal jumps are left out of a
// trial, and RPCs queueing while the connection is parked keep it at
// once. Once the RPCs in flight would fit one connection fewer, at most
// one each, for 30 seconds, it gives one back, and so on down to min. Stats().Events records every
// decision and why; the measuring on the RPC path is atomics only.
//
// # Growth at the server's stream limit
//
// A server or proxy often limits the streams of one connection
// (SETTINGS_MAX_CONCURRENT_STREAMS), and grpc-go queues the RPCs past it
// in the client. WithStreamLimit(streamsPerConn, maxConns) makes the pool
// add a connection when every connection carries streamsPerConn RPCs, up
// to maxConns, and close an added connection once it has carried no RPC
// for WithGrowthIdle (default 30s). The limit is configured: grpc-go does
// not expose the peer's setting. Off by default; not with WithAdaptive.
//
// # Closing
//
// Close (io.Closer) and Shutdown(ctx) stop the pool taking RPCs at once and
// let the RPCs and streams in flight finish: for 5 seconds with Close,
// until ctx ends with Shutdown. Those still in flight then end with code
// Canceled, and every connection closes at the same time. A second Close
// or Shutdown returns ErrClosed.
//
// # Metrics
//
// The pool reports OpenTelemetry metrics through the API package
// go.opentelemetry.io/otel/metric, to otel.GetMeterProvider() or to
// WithMeterProvider's provider; with no SDK installed they cost nothing.
// WithMeterProvider lists the instruments (rpclab.pool.size, inflight,
// picks, redials, resizes). inflight and picks are read at collection from
// the counters the pick keeps anyway: the RPC path does no metrics work.
//
// Apart from that, the pool only makes, picks and closes connections.
package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
)

// Pool is a set of connections to one target, of a fixed size or sized by
// WithAdaptive. It is safe for concurrent use. The zero value is not
// usable; call New.
type Pool struct {
	target string
	cfg    *config
	// slots is the list the pick reads: replaced whole (copy on write,
	// under mu) when the adaptive pool grows or shrinks.
	slots atomic.Pointer[[]*slot]
	// active, when above 0 and below the slots, is how many of the first
	// slots take new RPCs: an adaptive pool's trial parks its newest
	// connection for part of its measurement.
	active atomic.Int32
	nextID int           // the next slot's id; under mu
	next   atomic.Uint64 // RoundRobin's counter
	closed atomic.Bool
	// claimed counts the RPCs in flight on all connections, with growth
	// on only (WithStreamLimit): the one count that growth reads to tell
	// "every stream is taken" from a look at the connections' counts
	// that other picks changed while it was taken (see growSlot).
	claimed atomic.Int64

	ctl *control // the adaptive control loop; nil for a fixed size

	ctx    context.Context // ends at Close; bounds the watchers
	cancel context.CancelFunc
	wg     sync.WaitGroup // the watchers

	// mu orders replacements against Close and guards retired. It is never
	// taken on the RPC path, except by the last RPC to leave a retired
	// connection.
	mu      sync.Mutex
	retired map[*conn]struct{}
	// donePicks is, per slot id, the RPCs started on connections closed
	// since (the metrics' picks); under mu.
	donePicks map[int]uint64

	met *metrics // OpenTelemetry instruments

	// drained wakes a draining Shutdown when a connection's last RPC
	// ends (a buffered channel of one: a pending wake is enough).
	drained chan struct{}
}

var _ grpc.ClientConnInterface = (*Pool)(nil)

// slot is one position of the pool; its connection is replaced over time.
type slot struct {
	id      int                // in log lines: its position when created
	ctx     context.Context    // ends when the pool closes or drops the slot
	cancel  context.CancelFunc // drops the slot's watcher
	cur     atomic.Pointer[conn]
	redials atomic.Uint64
	// grown marks a slot added by growth at the stream limit: only such a
	// slot retires when idle. Set before the slot is published.
	grown bool
	// delay is the slot's current re-dial delay; only the slot's watcher
	// touches it (handed from one watcher to the next by the go statement).
	delay time.Duration
}

// conn is one ClientConn and its accounting.
type conn struct {
	inflight  atomic.Int64
	completed atomic.Uint64 // RPCs ended on it
	state     atomic.Int32  // connectivity.State, as the watcher last saw it
	retired   atomic.Bool   // replaced; close once no RPC is left on it
	closing   atomic.Bool   // Close has been called (exactly once)
	cc        *grpc.ClientConn
	pool      *Pool
	id        int         // its slot's id: rpclab.pool.connection
	wm        *writeMeter // adaptive pools only, else nil
	// lastCompleted is the control loop's previous reading of completed.
	lastCompleted uint64
	// Pad to 128 bytes, two cache lines, so that the counters of
	// connections allocated next to each other do not share a line.
	_ [64]byte
}

// New creates a pool of connections to target (any target grpc.NewClient
// accepts). It returns an error wrapping ErrEmptyTarget, ErrInvalidOption
// or ErrDial when the target or an option is bad; it does not wait for the
// network (see Connect).
func New(target string, opts ...Option) (*Pool, error) {
	if target == "" {
		return nil, ErrEmptyTarget
	}
	cfg := defaultConfig()
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i)
		}
		if err := o(cfg); err != nil {
			return nil, err
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &Pool{target: target, cfg: cfg, retired: map[*conn]struct{}{}, donePicks: map[int]uint64{},
		drained: make(chan struct{}, 1)}
	met, err := newMetrics(p)
	if err != nil {
		return nil, err
	}
	p.met = met
	p.ctx, p.cancel = context.WithCancel(context.Background())
	slots := make([]*slot, cfg.size)
	for i := range slots {
		c, err := p.dial()
		if err != nil {
			p.cancel()
			p.met.unregister()
			for _, s := range slots[:i] {
				_ = s.cur.Load().close()
			}
			return nil, fmt.Errorf("%w %s: %w", ErrDial, target, err)
		}
		slots[i] = p.newSlot(c)
	}
	p.slots.Store(&slots)
	for _, s := range slots {
		c := s.cur.Load()
		if !cfg.lazy {
			c.cc.Connect()
		}
		p.wg.Add(1)
		go p.watch(s, c)
	}
	p.met.sized(len(slots))
	if cfg.adaptive {
		p.startControl()
	}
	if cfg.streamLimit > 0 && cfg.maxConns > cfg.size {
		p.wg.Add(1)
		go p.retireIdle()
	}
	return p, nil
}

// newSlot makes the next slot, holding c.
func (p *Pool) newSlot(c *conn) *slot {
	s := p.newSlotID(c, p.nextID)
	p.nextID++
	return s
}

// newSlotID makes a slot with the given id, holding c.
func (p *Pool) newSlotID(c *conn, id int) *slot {
	s := &slot{id: id, delay: p.cfg.redialAfter}
	s.ctx, s.cancel = context.WithCancel(p.ctx)
	c.id = id
	s.cur.Store(c)
	return s
}

func (p *Pool) dial() (*conn, error) {
	c := &conn{pool: p}
	opts := p.cfg.dialOpts
	switch {
	case p.cfg.adaptive:
		c.wm = &writeMeter{dial: p.cfg.dialer}
		// First, so that a dialer of the caller's wins (the meter then
		// measures nothing: writeMeter.dialed).
		opts = append([]grpc.DialOption{grpc.WithContextDialer(c.wm.dialer)}, opts...)
	case p.cfg.dialer != nil:
		opts = append([]grpc.DialOption{grpc.WithContextDialer(p.cfg.dialer)}, opts...)
	}
	cc, err := grpc.NewClient(p.target, opts...)
	if err != nil {
		return nil, err
	}
	c.cc = cc
	c.state.Store(int32(cc.GetState()))
	return c, nil
}

// list is the current slots.
func (p *Pool) list() []*slot { return *p.slots.Load() }

// Target is the target the pool was created with.
func (p *Pool) Target() string { return p.target }

// Size is the number of connections taking RPCs: fixed, or the adaptive
// pool's size now (connections draining after a shrink are not counted).
func (p *Pool) Size() int { return len(p.list()) }

// Invoke performs a unary RPC on a connection chosen by the pool's policy.
// After Close it returns ErrClosed.
func (p *Pool) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if p.closed.Load() {
		return ErrClosed
	}
	c := p.begin()
	if p.closed.Load() {
		// Shutdown began between the two loads: it may not have seen
		// this RPC in flight, so the RPC does not start (see Shutdown).
		c.leave()
		return ErrClosed
	}
	err := c.cc.Invoke(ctx, method, args, reply, opts...)
	c.release()
	return err
}

// begin picks the connection of one RPC and, in an adaptive pool, notes
// it for the write meter (a clock read only when no earlier RPC waits to
// be written); release ends it. Both read and write atomics only: no lock,
// no allocation (TestRPCPathAllocs).
func (p *Pool) begin() *conn {
	c := p.pick()
	if c.wm != nil {
		c.wm.queued()
	}
	return c
}

// NewStream opens a stream on a connection chosen by the pool's policy. The
// stream stays on that connection and counts as in flight until it ends.
// After Close it returns ErrClosed.
func (p *Pool) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	c := p.begin()
	if p.closed.Load() {
		c.leave()
		return nil, ErrClosed
	}
	e := &streamEnd{c: c}
	// grpc-go calls OnFinish exactly once when the stream ends, however it
	// ends (status received, error, context done). The guard covers the
	// paths where an interceptor fails before grpc-go sees the stream.
	opts = append(opts[:len(opts):len(opts)], grpc.OnFinish(e.finish))
	cs, err := c.cc.NewStream(ctx, desc, method, opts...)
	if err != nil {
		e.finish(err)
		return nil, err
	}
	return cs, nil
}

// streamEnd releases a stream's connection once.
type streamEnd struct {
	c    *conn
	done atomic.Bool
}

func (e *streamEnd) finish(error) {
	if e.done.CompareAndSwap(false, true) {
		e.c.release()
	}
}

// release ends one RPC on c, closing c if it was retired and this was the
// last RPC on it.
func (c *conn) release() {
	c.completed.Add(1)
	c.leave()
}

// leave takes back pick's count of one RPC on c, closing c if it was
// retired and this was the last RPC on it, and waking a draining Shutdown
// when c has nothing left in flight.
func (c *conn) leave() {
	if c.pool.cfg.streamLimit > 0 {
		c.pool.claimed.Add(-1) // before c's count: claimed never runs ahead
	}
	if c.inflight.Add(-1) == 0 {
		if c.retired.Load() {
			c.closeRetired()
		}
		if c.pool.closed.Load() {
			c.pool.wakeDrain()
		}
	}
}

// retire marks c as replaced. Whoever sees c retired with nothing in flight
// closes it: this call, or the last release. pick increments inflight before
// it checks retired, and retire sets retired before it reads inflight, so
// an RPC never runs on a connection closed under it.
func (c *conn) retire() {
	c.retired.Store(true)
	if c.inflight.Load() == 0 {
		c.closeRetired()
	}
}

func (c *conn) closeRetired() {
	if c.closing.Load() {
		return
	}
	err := c.close()
	p := c.pool
	p.mu.Lock()
	if _, ok := p.retired[c]; ok {
		p.donePicks[c.id] += c.completed.Load()
		delete(p.retired, c)
	}
	p.mu.Unlock()
	if err != nil && !errors.Is(err, errAlreadyClosing) {
		p.cfg.logger.Warn("pool: close replaced connection", "target", p.target, "err", err)
	}
}

var errAlreadyClosing = errors.New("pool: connection already closing")

// close closes c's ClientConn once; later calls return errAlreadyClosing.
func (c *conn) close() error {
	if !c.closing.CompareAndSwap(false, true) {
		return errAlreadyClosing
	}
	return c.cc.Close()
}

// Connect starts dialling every connection that is not connected and waits
// until all are READY or ctx ends. It returns ErrClosed after Close, and
// otherwise an error naming the first connection that is not ready and its
// last state. Connections keep trying after ctx ends.
func (p *Pool) Connect(ctx context.Context) error {
	if p.closed.Load() {
		return ErrClosed
	}
	slots := p.list()
	for _, s := range slots {
		s.cur.Load().cc.Connect()
	}
	for i, s := range slots {
	wait:
		for {
			c := s.cur.Load()
			st := c.cc.GetState()
			if st == connectivity.Ready {
				// Return once the picker sees it READY too: the watcher
				// caches the state a moment after grpc-go reports it.
				if p.seenReady(ctx, c) {
					break
				}
				if ctx.Err() != nil {
					return fmt.Errorf("pool: connection %d to %s not ready: %w", i, p.target, ctx.Err())
				}
				continue
			}
			if st == connectivity.Shutdown {
				if p.closed.Load() {
					return ErrClosed
				}
				if s.ctx.Err() != nil {
					break wait // the adaptive pool dropped this slot
				}
				if c.retired.Load() || c.closing.Load() {
					continue // replaced, or about to be: look again
				}
			}
			if st == connectivity.Idle {
				c.cc.Connect()
			}
			if !c.cc.WaitForStateChange(ctx, st) {
				return fmt.Errorf("pool: connection %d to %s not ready (last state %s): %w", i, p.target, st, ctx.Err())
			}
		}
	}
	return nil
}

// seenReady waits until c's cached state is READY and reports true, or
// reports false at once if c leaves READY or ctx ends.
func (p *Pool) seenReady(ctx context.Context, c *conn) bool {
	for connectivity.State(c.state.Load()) != connectivity.Ready {
		if c.cc.GetState() != connectivity.Ready || !sleep(ctx, 50*time.Microsecond) {
			return false
		}
	}
	return true
}
