// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package lab runs a measuring session: it checks and opens the outputs
// before any work, starts rpclab's server as a child process pinned apart
// from the client, watches it (a dead child ends the session with its exit
// status), puts the netem proxy in front when asked, and runs each client's
// sweep in turn, handing every record to the records file as it is
// measured. The CLI maps its flags to Options and draws the Events.
package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpclab/rpclab/internal/limitread"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
)

// Session is one measuring session. New checks and opens its outputs,
// Start starts its children, Close stops them and closes the files.
type Session struct {
	cfg *config
	// Target is where clients connect: the target given, the child
	// server's address, or the netem proxy in front of either.
	Target string
	// Server is the child server's implementation ("" with a target).
	Server string
	// ClientCPUs are the CPUs this process was pinned to (nil: not pinned).
	ClientCPUs []int
	// ServerCPUs are the CPUs the child server was pinned to (nil: not
	// pinned, or no child).
	ServerCPUs []int
	// Netem is the emulated network in front of the target, as records
	// describe it (nil without a front proxy).
	Netem *result.NetemSpec

	files   map[string]*os.File
	written atomic.Int64 // records that reached the records file
	child   *server.Process
	mu      sync.Mutex
	proxies []*Proxy
	stopped chan struct{} // closed by Close, before the children stop
}

// New applies opts, validates them, checks every output (CheckOutputs)
// and creates those marked Open. It starts nothing.
func New(opts ...Option) (*Session, error) {
	c := defaultConfig()
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	if err := CheckOutputs(c.inputs, c.force, c.outputs...); err != nil {
		return nil, err
	}
	s := &Session{cfg: c, Target: c.target, files: map[string]*os.File{}, stopped: make(chan struct{})}
	for _, o := range c.outputs {
		if !o.Open || o.Path == "" {
			continue
		}
		// Write-only, so that a FIFO with no reader is refused at once
		// (limitread.ErrNoReader) rather than filled with records no one
		// reads.
		f, err := limitread.OpenFile(context.Background(), o.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			s.Close()
			return nil, &OutputError{o.Name, o.Path, err}
		}
		s.files[o.Name] = f
	}
	return s, nil
}

// File returns the opened output of that name, or nil.
func (s *Session) File(name string) *os.File { return s.files[name] }

// Start starts the child server (without a target) and the front netem
// proxy (WithNetem front). ctx bounds the children's lives too.
func (s *Session) Start(ctx context.Context) error {
	if s.Target == "" {
		if err := s.startChild(ctx); err != nil {
			return err
		}
	}
	if s.cfg.network != nil && s.cfg.front {
		p, err := s.Proxy(ctx, s.Target)
		if err != nil {
			return err
		}
		s.Target, s.Netem = p.Addr, p.Spec
	}
	return nil
}

// startChild starts the server. With two or more usable CPUs (and pinning
// on) the server gets the last CPU and this process the others, so client
// and server never compete for a core.
func (s *Session) startChild(ctx context.Context) error {
	srv := s.cfg.server
	var clientCPUs, serverCPUs []int
	if cpus, err := procstat.AllowedCPUs(); err == nil && len(cpus) >= 2 && s.cfg.pin {
		serverCPUs, clientCPUs = cpus[len(cpus)-1:], cpus[:len(cpus)-1]
	}
	argv := append([]string(nil), srv.Argv...)
	if srv.Prepare != nil {
		var err error
		if argv, err = srv.Prepare(ctx); err != nil {
			return err
		}
	}
	pinned := serverCPUs
	if srv.PinArgs != nil && len(serverCPUs) > 0 {
		argv = append(argv, srv.PinArgs(serverCPUs)...)
		serverCPUs = nil
	}
	p, err := server.StartProcess(ctx, argv, serverCPUs, s.cfg.startTimeout)
	if err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	s.child = p
	if len(clientCPUs) > 0 {
		if err := procstat.Pin(0, clientCPUs); err != nil {
			clientCPUs = nil
		} else {
			runtime.GOMAXPROCS(len(clientCPUs))
		}
	}
	s.Target, s.Server, s.ClientCPUs = p.Addr, srv.Name, clientCPUs
	s.ServerCPUs = pinned
	s.cfg.progress(Event{Kind: ServerStarted, Addr: p.Addr, Pid: p.Pid, CPUs: clientCPUs})
	return nil
}

// ServerErr is nil while the child server and the netem proxies run (or
// without them), and after one exited an error wrapping ErrServerExited
// (or ErrProxyExited) with its pid, exit status or signal, and its stderr.
func (s *Session) ServerErr() error {
	if s.child != nil {
		select {
		case <-s.child.Done():
			err := fmt.Errorf("%w: pid %d ended with %s", ErrServerExited, s.child.Pid, s.child.Exit())
			if e := s.child.Stderr(); e != "" {
				err = fmt.Errorf("%w; its stderr: %s", err, e)
			}
			return err
		default:
		}
	}
	s.mu.Lock()
	proxies := slices.Clone(s.proxies)
	s.mu.Unlock()
	for _, p := range proxies {
		select {
		case <-p.p.Done():
			err := fmt.Errorf("%w: the proxy in front of %s (pid %d) ended with %s", ErrProxyExited, p.Upstream, p.Pid, p.p.Exit())
			if e := p.p.Stderr(); e != "" {
				err = fmt.Errorf("%w; its stderr: %s", err, e)
			}
			return err
		default:
		}
	}
	return nil
}

// exited is closed when the child server or a netem proxy exits (never
// without them), or when stop closes.
func (s *Session) exited(stop <-chan struct{}) <-chan struct{} {
	s.mu.Lock()
	var chs []<-chan struct{}
	for _, p := range s.proxies {
		chs = append(chs, p.p.Done())
	}
	s.mu.Unlock()
	if s.child != nil {
		chs = append(chs, s.child.Done())
	}
	out := make(chan struct{})
	var once sync.Once
	for _, ch := range chs {
		go func() {
			select {
			case <-ch:
				once.Do(func() { close(out) })
			case <-stop:
			}
		}()
	}
	return out
}

// deathGrace is how long a failed record waits for news of the child
// server's (or a proxy's) death: loadgen names a refused or reset
// connection at once, which can beat the news.
const deathGrace = 250 * time.Millisecond

// death is ServerErr while ctx runs (a server stopped because the caller
// was interrupted did not die, so it is nil once ctx ended). For a record
// that failed (failed true) it first waits up to deathGrace for the
// child's or a proxy's exit, so the record names the death rather than
// its symptom ("connection refused: nothing listens there").
func (s *Session) death(ctx context.Context, failed bool) error {
	if failed && s.watching() && s.ServerErr() == nil && ctx.Err() == nil {
		stop := make(chan struct{})
		t := time.NewTimer(deathGrace)
		select {
		case <-s.exited(stop):
		case <-t.C:
		}
		close(stop)
		t.Stop()
	}
	if ctx.Err() != nil {
		return nil
	}
	return s.ServerErr()
}

// watching tells whether the session has a child server or a netem proxy
// whose death a failed record could be the symptom of (with a target and
// no proxy, as a sweep on workers runs, there is none to wait for).
func (s *Session) watching() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.child != nil || len(s.proxies) > 0
}

// Watch returns a context that is cancelled, with ServerErr as its cause,
// as soon as the child server or a netem proxy exits; stop releases it.
func (s *Session) Watch(ctx context.Context) (wctx context.Context, stop func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	exited := s.exited(done)
	go func() {
		select {
		case <-exited:
			cancel(s.ServerErr())
		case <-done:
		case <-wctx.Done():
		}
	}()
	var once sync.Once
	return wctx, func() { once.Do(func() { close(done); cancel(nil) }) }
}

// Close stops the proxies and the child server and closes the output
// files; it returns the first error closing a file.
func (s *Session) Close() error {
	select {
	case <-s.stopped:
		return nil
	default:
		close(s.stopped)
	}
	s.mu.Lock()
	for _, p := range s.proxies {
		p.Stop()
	}
	s.mu.Unlock()
	if s.child != nil {
		_ = s.child.Stop()
	}
	var errs []error
	for name, f := range s.files {
		if err := f.Close(); err != nil {
			errs = append(errs, &OutputError{name, f.Name(), err})
		}
	}
	return errors.Join(errs...)
}
