// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	// ServerStarted: the child server listens at Addr (Pid); this process
	// is pinned to CPUs (nil: not pinned).
	ServerStarted EventKind = iota
	// ProxyStarted: a netem proxy at Addr (Pid) emulates Network in front
	// of Upstream.
	ProxyStarted
	// ClientStarted: Client starts its sweep of Conns.
	ClientStarted
	// StepStarted: step I of N (Step) starts.
	StepStarted
	// StepEnded: step I of N ended with Record, which is kept.
	StepEnded
	// ClientFailed: Client's sweep failed with Err; the session goes on
	// with the next client.
	ClientFailed
)

// Event is what a session tells its progress callback.
type Event struct {
	Kind           EventKind
	Addr, Upstream string
	Pid            int
	CPUs           []int
	Network        netem.Network
	Client         string
	Conns          []string
	I, N           int
	Step           loadgen.Step
	Record         *result.Record
	Err            error
}

// Client is one client a session runs.
type Client struct {
	// Name is the client's language ("go", "java", ...).
	Name string
	// Conns are the layouts it sweeps, as given.
	Conns []string
	// Spec is its sweep; Run sets Target (and Server) to the session's.
	Spec loadgen.Spec
	// LoadModel is "closed" or "open", for a record Run writes itself.
	LoadModel string
	// Sweep runs the steps of spec, handing each record to sink and
	// telling prog (loadgen.Sweep, SweepOpen or an external client's).
	Sweep func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error
}

// Run runs each client's sweep in turn against the session's target. Every
// record gets the session's netem spec and server, goes to the records
// output (the Output with Keep and Open) as it is measured, and is
// returned. With keepGoing (rpclab compare) a client that fails is
// reported (ClientFailed) and the next one runs. If the child server exits,
// the step in progress is kept as failed with the server's exit status,
// no further step runs, and the error wraps ErrServerExited.
func (s *Session) Run(ctx context.Context, clients []Client, keepGoing bool) ([]result.Record, error) {
	if len(clients) == 0 {
		return nil, ErrNoClient
	}
	wctx, stop := s.Watch(ctx)
	defer stop()
	r := &runner{s: s, w: s.recordsWriter(), ctx: ctx}
	var errs []error
	for _, c := range clients {
		s.cfg.progress(Event{Kind: ClientStarted, Client: c.Name, Conns: c.Conns})
		err := r.client(wctx, c)
		if serr := r.serverErr(); serr != nil {
			return r.recs, errors.Join(append(errs, serr)...)
		}
		if err == nil {
			continue
		}
		if ctx.Err() != nil || !keepGoing {
			errs = append(errs, err)
			break
		}
		s.cfg.progress(Event{Kind: ClientFailed, Client: c.Name, Err: err})
		errs = append(errs, fmt.Errorf("%s client: %w", c.Name, err))
	}
	return r.recs, errors.Join(errs...)
}

// runner is one Run: the records kept and the step in progress.
type runner struct {
	s       *Session
	ctx     context.Context // the caller's: once it ends, so does the server, by our hand
	w       *recordsFile
	recs    []result.Record
	cur     *Event // the step started and not ended
	stopped bool   // the server died and its step is kept
}

// recordsFile is the session's records file (nil without one): it counts
// what reached it, and names itself and that count when a write fails.
type recordsFile struct {
	s    *Session
	name string
	path string
	w    *result.Writer
}

func (s *Session) recordsWriter() *recordsFile {
	for _, o := range s.cfg.outputs {
		if o.Keep && o.Open && s.files[o.Name] != nil {
			return &recordsFile{s: s, name: o.Name, path: o.Path, w: result.NewWriter(s.files[o.Name])}
		}
	}
	return nil
}

// Write writes r, or returns a *WriteError.
func (f *recordsFile) Write(r result.Kinded) error {
	if err := f.w.Write(r); err != nil {
		return &WriteError{Name: f.name, Path: f.path, Written: int(f.s.written.Load()), Err: err}
	}
	f.s.written.Add(1)
	return nil
}

// Written is how many records reached the session's records file: a
// record measured and then refused by a full disk is not among them.
func (s *Session) Written() int { return int(s.written.Load()) }

// cutOff is the error of the record of a step cut off before it measured
// anything.
const cutOff = "cut off before the step measured anything"

// Measured is how many of recs measured something: all but those of
// steps cut off (interrupted) before they measured anything, which are
// kept only to say where the run ended.
func Measured(recs []result.Record) int {
	n := 0
	for i := range recs {
		if recs[i].Status != result.StatusInterrupted || recs[i].Error != cutOff {
			n++
		}
	}
	return n
}

// client runs c's sweep; a step the server died in is kept as failed.
func (r *runner) client(ctx context.Context, c Client) error {
	spec := c.Spec
	spec.Target = r.s.Target
	if r.s.Server != "" {
		spec.Server = r.s.Server
	}
	prog := loadgen.Progress(func(ev loadgen.Event) {
		switch ev.Kind {
		case loadgen.StepStarted:
			r.cur = &Event{Kind: StepStarted, I: ev.I, N: ev.N, Step: ev.Step, Client: c.Name}
			r.s.cfg.progress(*r.cur)
		case loadgen.StepEnded:
			r.cur = nil
			r.s.cfg.progress(Event{Kind: StepEnded, I: ev.I, N: ev.N, Step: ev.Step, Record: ev.Record, Client: c.Name})
		}
	})
	err := c.Sweep(ctx, &spec, r.sink, prog)
	if r.cur == nil || r.stopped || ctx.Err() == nil {
		return err
	}
	// The step was cut off before it measured anything, by the caller
	// (interrupted) or by the server's death (failed, in sink): keep it,
	// so the records say where the run ended.
	rec := unmeasured(&spec, r.cur.Step, c, r.s.ClientCPUs)
	rec.Status, rec.Error = result.StatusInterrupted, cutOff
	werr := r.sink(rec)
	if r.cur != nil { // not ended by sink
		e := *r.cur
		e.Kind, e.Record = StepEnded, rec
		r.cur = nil
		r.s.cfg.progress(e)
	}
	if werr != nil && !errors.Is(werr, ErrServerExited) && !errors.Is(werr, ErrProxyExited) {
		return errors.Join(err, werr)
	}
	return err
}

// sink keeps rec. Once the child server is dead, rec is the last: it is
// kept as failed with the server's exit status, its end is reported, and
// the sweep is stopped with the server's error.
func (r *runner) sink(rec *result.Record) error {
	rec.Spec.Netem = r.s.Netem
	if r.s.Server != "" { // other languages' clients do not know who started the server
		rec.Spec.Server = r.s.Server
	}
	serr := r.s.death(r.ctx, rec.Status == result.StatusFailed)
	if serr != nil {
		rec.Status = result.StatusFailed
		rec.Error = serr.Error()
	} else {
		verdict.MarkStall(rec) // RPCs held in flight at the step's end: the server stalled
	}
	r.recs = append(r.recs, *rec)
	if r.w != nil {
		if err := r.w.Write(rec); err != nil {
			return err
		}
	}
	if serr == nil {
		return nil
	}
	// loadgen reports no end for a step whose record was refused.
	r.stopped = true
	if r.cur != nil {
		e := *r.cur
		e.Kind, e.Record = StepEnded, rec
		r.cur = nil
		r.s.cfg.progress(e)
	}
	return serr
}

// serverErr is the session's ServerErr while the caller's context runs:
// a server stopped because the caller was interrupted did not die.
func (r *runner) serverErr() error { return r.s.death(r.ctx, false) }

// unmeasured is the failed record of a step that measured nothing:
// loadgen's record of the step, in c's load model, and for another
// language's client with only its language (the client's gRPC and runtime
// are its own to tell).
// unknownImpl is env.grpc_impl of a record for another language's client
// cut off before it reported its stack.
const unknownImpl = "unknown"

func unmeasured(spec *loadgen.Spec, st loadgen.Step, c Client, cpus []int) *result.Record {
	rec := loadgen.NewRecord(spec, st, loadgen.Options{ClientCPUs: cpus})
	rec.Status = result.StatusFailed
	if c.LoadModel != "" {
		rec.Spec.LoadModel = c.LoadModel
	}
	if c.Name != "go" {
		rec.Env.Language = c.Name
		// The client never reported its stack: say so (the schema wants a name).
		rec.Env.GRPCImpl, rec.Env.GRPCVersion, rec.Env.RuntimeVersion = unknownImpl, "", ""
	}
	return rec
}
