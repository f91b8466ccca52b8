// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package flow is the large-message study: how long one unary request of a
// large payload takes over an emulated round-trip time, RPC after RPC on a
// fresh connection, for gRPC with dynamic flow-control windows (grpc-go's
// BDP estimation), gRPC with fixed 64 KiB windows, plain HTTP/2 (h2c) and
// HTTP/1.1 POSTs of the same bytes. The network between client and server
// is a netem.Proxy in this process.
//
// Each cell (transport, payload, RTT) gets a fresh connection, set up by one
// empty request, then RPCs run one after another; the record keeps the time
// of each and the steady state (the median after the tenth). Records are
// result.FlowRecord values (kind "flow"), documented in docs/flow.md.
package flow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/progress"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/usage"
)

// Transports, result's names (their doc comments say what each is).
const (
	GRPCDynamic = result.FlowGRPCDynamic
	GRPCFixed   = result.FlowGRPCFixed
	H2C         = result.FlowH2C
	HTTP1       = result.FlowHTTP1
)

// Transports lists every transport in the order the study runs them
// (result.FlowTransports).
var Transports = result.FlowTransports

// FirstRPCs is how many RPCs a record lists one by one in the table; the
// steady state is the median of those after them (result.FlowFirstRPCs).
const FirstRPCs = result.FlowFirstRPCs

// Progress is told as each cell starts and ends; a nil Progress is told
// nothing. It is flow's name for the one progress shape (package
// internal/progress), as loadgen.Progress is the load generator's.
type Progress = progress.Func[Cell, result.FlowRecord]

// Event is one moment of a run: cell I (from 0) of N started or ended.
type Event = progress.Event[Cell, result.FlowRecord]

const (
	// CellStarted: the cell is about to run (Record is nil).
	CellStarted = progress.Started
	// CellEnded: the cell ran and its record went to the sink.
	CellEnded = progress.Ended
)

// MaxPayload bounds one request.
const MaxPayload = 1 << 30

// Validate's errors are a *usage.Error whose Setting is one of these,
// naming the setting that is wrong.
var (
	// ErrBadPayload: a payload out of range, or none.
	ErrBadPayload = errors.New("flow: bad payload")
	// ErrBadTransport: an unknown transport, or none.
	ErrBadTransport = errors.New("flow: bad transport")
	// ErrBadRTT: a negative RTT, or none.
	ErrBadRTT = errors.New("flow: bad RTT")
	// ErrBadRPCs: fewer than one RPC per cell.
	ErrBadRPCs = errors.New("flow: bad RPC count")
	// ErrBadBudget: a budget that is not positive.
	ErrBadBudget = errors.New("flow: bad budget")
	// ErrBadWindow: a fixed window grpc-go would not keep fixed.
	ErrBadWindow = errors.New("flow: bad window")
	// ErrBadRate: a negative rate.
	ErrBadRate = errors.New("flow: bad rate")
)

// payloadString writes p as a user would have: decimal units when they
// divide it ("10GB"), else binary ("64KiB").
func payloadString(p int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
		if p != 0 && p%u.m == 0 {
			return strconv.FormatInt(p/u.m, 10) + u.s
		}
	}
	return result.FormatBytes(p)
}

// Spec is a study: every transport x payload x RTT is one cell.
type Spec struct {
	Transports []string
	Payloads   []int64
	// RTTs are emulated round-trip times; each direction gets half.
	RTTs []time.Duration
	// RateBps caps each direction's bandwidth (0: unlimited).
	RateBps int64
	// RPCs is how many RPCs a cell runs (at least 1).
	RPCs int
	// Budget bounds a cell: after it, no new RPC starts and one in flight
	// is abandoned; the cell is then marked truncated.
	Budget time.Duration
	// FixedWindow is the stream and connection window of GRPCFixed.
	FixedWindow int32
}

// Validate reports the first bad field of s.
func (s *Spec) Validate() error {
	switch {
	case len(s.Transports) == 0:
		return usage.Errorf(ErrBadTransport, "none given")
	case len(s.Payloads) == 0:
		return usage.Errorf(ErrBadPayload, "none given")
	case len(s.RTTs) == 0:
		return usage.Errorf(ErrBadRTT, "none given")
	case s.RPCs < 1:
		return usage.Errorf(ErrBadRPCs, "%d RPCs per cell: want at least 1", s.RPCs)
	case s.Budget <= 0:
		return usage.Errorf(ErrBadBudget, "%v: must be positive", s.Budget)
	case s.FixedWindow < 64<<10-1:
		return usage.Errorf(ErrBadWindow, "fixed window %d: grpc-go keeps BDP estimation on below 65535 bytes", s.FixedWindow)
	case s.RateBps < 0:
		return usage.Errorf(ErrBadRate, "negative rate %d", s.RateBps)
	}
	for _, t := range s.Transports {
		if !slices.Contains(Transports, t) {
			return usage.Errorf(ErrBadTransport, "unknown transport %q (want %v)", t, Transports)
		}
	}
	for _, p := range s.Payloads {
		if p < 0 || p > MaxPayload {
			return usage.Errorf(ErrBadPayload, "%s (%d bytes) is outside 0..%s, the largest payload", payloadString(p), p, result.FormatBytes(MaxPayload))
		}
	}
	for _, r := range s.RTTs {
		if r < 0 {
			return usage.Errorf(ErrBadRTT, "negative RTT %v", r)
		}
	}
	return nil
}

// Steady fills FirstNS, SteadyNS and SteadyFrom from RPCNS.
func Steady(r *result.FlowRecord) {
	n := len(r.RPCNS)
	if n == 0 {
		return
	}
	r.FirstNS = r.RPCNS[0]
	from := FirstRPCs
	if n <= FirstRPCs {
		from = n / 2
	}
	r.SteadyNS, _ = stats.Median(r.RPCNS[from:])
	r.SteadyFrom = from + 1
}

// Cell is one combination of a Spec.
type Cell struct {
	Transport string
	Payload   int64
	RTT       time.Duration
}

// Cells lists the cross product in run order: by RTT, then payload, then
// transport, so the transports of one payload and RTT run side by side.
func (s *Spec) Cells() []Cell {
	var out []Cell
	for _, r := range s.RTTs {
		for _, p := range s.Payloads {
			for _, t := range s.Transports {
				out = append(out, Cell{Transport: t, Payload: p, RTT: r})
			}
		}
	}
	return out
}

// Run runs every cell of s and hands each record to sink as soon as it is
// measured. progress, if not nil, is told as each cell starts and ends
// (after its record went to the sink). Run returns
// ctx's error if it was stopped, or sink's first error; failed cells are
// records, not errors.
func Run(ctx context.Context, s *Spec, sink func(*result.FlowRecord) error, progress Progress) error {
	if err := s.Validate(); err != nil {
		return err
	}
	var maxPayload int64
	for _, p := range s.Payloads {
		maxPayload = max(maxPayload, p)
	}
	srv, err := startServers(s, maxPayload)
	if err != nil {
		return err
	}
	defer srv.close()
	payload := make([]byte, maxPayload)
	for i := range payload {
		payload[i] = byte(i)
	}
	cells := s.Cells()
	for i, c := range cells {
		if err := ctx.Err(); err != nil {
			return err
		}
		progress.Started(i, len(cells), c)
		rec := runCell(ctx, s, srv, c, payload[:c.Payload])
		if ctx.Err() != nil && rec.Status != result.StatusOK {
			// Stopped inside the cell: what was measured is kept, marked.
			rec.Status, rec.Error = result.StatusInterrupted, ctx.Err().Error()
		}
		if err := sink(rec); err != nil {
			return err
		}
		progress.Ended(i, len(cells), c, rec)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// measured, when a test sets it, is told the count of a cell's RPCs
// measured so far after each one (the event a test that stops a cell
// midway waits for; nil in a run).
var measured func(n int)

// runCell measures one cell through its own proxy and connection.
func runCell(ctx context.Context, s *Spec, srv *servers, c Cell, payload []byte) *result.FlowRecord {
	rec := &result.FlowRecord{
		SchemaVersion: result.SchemaVersion, Kind: result.KindFlow, StartedAt: time.Now().UTC(),
		Transport: c.Transport, PayloadBytes: c.Payload, RTTNS: int64(c.RTT), RateBps: s.RateBps,
		RPCsRequested: s.RPCs, BudgetNS: int64(s.Budget), RPCNS: []int64{},
		Env: result.GoEnv(grpc.Version, nil),
	}
	if c.Transport == GRPCFixed {
		rec.WindowBytes = int(s.FixedWindow)
	}
	fail := func(err error) *result.FlowRecord {
		rec.Status, rec.Error = result.StatusFailed, err.Error()
		Steady(rec)
		return rec
	}
	link := netem.Link{Delay: c.RTT / 2, RateBps: s.RateBps}
	link2 := link
	link2.Delay = c.RTT - link.Delay // odd nanoseconds go one way
	px, err := netem.Listen("127.0.0.1:0", srv.addr(c.Transport), netem.Network{Up: link, Down: link2})
	if err != nil {
		return fail(err)
	}
	go px.Serve(ctx)
	defer px.Close()

	cctx, cancel := context.WithTimeout(ctx, s.Budget)
	defer cancel()
	cl, err := dial(cctx, c.Transport, px.Addr().String(), s)
	if err != nil {
		return fail(fmt.Errorf("flow: connect: %w", err))
	}
	defer cl.close()
	if err := cl.call(cctx, nil); err != nil { // sets the connection up
		return fail(fmt.Errorf("flow: first empty request: %w", err))
	}
	start := time.Now()
	for i := 0; i < s.RPCs; i++ {
		t := time.Now()
		err := cl.call(cctx, payload)
		d := time.Since(t)
		if err != nil {
			if cctx.Err() != nil {
				break // the budget ended, or the run was stopped (Run marks it)
			}
			return fail(fmt.Errorf("flow: RPC %d: %w", i+1, err))
		}
		rec.RPCNS = append(rec.RPCNS, int64(d))
		if measured != nil {
			measured(len(rec.RPCNS))
		}
		if time.Since(start) >= s.Budget {
			break
		}
	}
	Steady(rec)
	switch {
	case len(rec.RPCNS) < s.RPCs:
		rec.Status = result.StatusTruncated
	default:
		rec.Status = result.StatusOK
	}
	return rec
}
