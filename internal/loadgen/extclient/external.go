// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package extclient runs the load generators of other languages
// (clients/<lang>/, docs/clients.md): it builds one, runs it on a
// loadgen.Spec, relays its output, tails the records it writes and counts
// the connections its process holds, as the operating system sees them.
package extclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// Languages whose clients live in clients/<lang>/ (docs/clients.md).
var Languages = []string{"cpp", "java", "rust", "python", "node"}

// CCoreLayouts are the layouts that only mean something in stacks that
// share subchannels between channels with identical arguments: C++,
// Python's grpcio (both C-core) and grpc-js, which copies its design.
var CCoreLayouts = []string{"channel-per-worker", "local-pool", "distinct-args"}

// PickLangs are the clients whose pool takes a pick policy
// (pool:N:least-loaded), each through its stack's pool library.
var PickLangs = []string{"go", "python", "node", "java", "rust", "cpp"}

// HasLayout says whether the client of lang has the --conn layout conn:
// every client has shared, per-worker and pool:N; only the C-core style
// stacks have CCoreLayouts. A pool's least-loaded pick is in the clients
// whose pool library has it (PickLangs); an adaptive pool is the Go
// client's (package pool).
func HasLayout(lang, conn string) bool {
	kind, rest, _ := strings.Cut(conn, ":")
	switch loadgen.ConnKind(kind) {
	case loadgen.Shared, loadgen.PerWorker:
		return true
	case loadgen.Pooled:
		if strings.HasPrefix(rest, "auto") { // an adaptive pool is package pool's
			return lang == "go"
		}
		return !strings.Contains(rest, ":") || slices.Contains(PickLangs, lang)
	}
	if slices.Contains(CCoreLayouts, kind) {
		return lang == "cpp" || lang == "python" || lang == "node"
	}
	return false
}

// External is a client of another language that follows docs/clients.md:
// clients/<lang>/build.sh builds it and clients/<lang>/rpclab-client runs it.
type External struct {
	Lang string
	// Dir is the clients/<lang> folder.
	Dir string
	// Conns are the --conn values, passed as given: the client knows which
	// layouts its stack has.
	Conns []string
	// Stderr receives the build's and the client's stderr.
	Stderr io.Writer
	// SampleEvery is how often the client's connections are counted
	// (default 50ms).
	SampleEvery time.Duration
	// ServerCPUs are the CPUs the server was pinned to when it runs on
	// this host (lab's child server), for each record's host_cpu.
	ServerCPUs []int
}

// FindClientsDir finds the clients/ folder of an rpclab checkout: upwards
// from the working directory, then from the executable's folder.
func FindClientsDir() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, d := range starts {
		for {
			c := filepath.Join(d, "clients")
			if st, err := os.Stat(c); err == nil && st.IsDir() {
				if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
					return c, nil
				}
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return "", fmt.Errorf("extclient: %w: none above the working directory or the executable", ErrNoClientsDir)
}

// NewExternal checks that clients/<lang> exists under clientsDir.
func NewExternal(clientsDir, lang string, conns []string, stderr io.Writer) (*External, error) {
	known := false
	for _, l := range Languages {
		known = known || l == lang
	}
	if !known {
		return nil, usage.Errorf(ErrClient, "unknown client %q (want go, %s)", lang, strings.Join(Languages, ", "))
	}
	// Absolute, since build.sh and rpclab-client run with Dir set to it.
	dir, err := filepath.Abs(filepath.Join(clientsDir, lang))
	if err != nil {
		return nil, usage.Errorf(ErrClientsDir, "%v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil {
		return nil, usage.Errorf(ErrClient, "%s has no build.sh: %v", dir, err)
	}
	if len(conns) == 0 {
		return nil, usage.Errorf(loadgen.ErrConn, "no connection mode given")
	}
	return &External{Lang: lang, Dir: dir, Conns: conns, Stderr: stderr, SampleEvery: 50 * time.Millisecond}, nil
}

// Build runs clients/<lang>/build.sh, which builds only what is out of date.
func (e *External) Build(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(e.Dir, "build.sh"))
	cmd.Dir = e.Dir
	cmd.Stdout, cmd.Stderr = e.Stderr, e.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("extclient: build the %s client (%s/build.sh): %w", e.Lang, e.Dir, err)
	}
	return nil
}

// ExitError is a client that ended with a non-zero code.
type ExitError struct {
	Lang string
	Code int
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("the %s client exited with code %d", e.Lang, e.Code)
}

// Sweep runs the client on spec and hands sink each record as the client
// writes it, with conns_observed set from the operating system: the most
// connections the client process held to the target during the record's
// interval. When ctx ends the client gets SIGTERM, and what it wrote is kept.
func (e *External) Sweep(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
	if err := spec.ValidateLoad(); err != nil {
		return err
	}
	tmp, err := os.CreateTemp("", "rpclab-"+e.Lang+"-*.jsonl")
	if err != nil {
		return fmt.Errorf("extclient: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())

	// The client's steps as data (docs/clients.md, "The step spec"), in its
	// order; each appends its record to tmp.
	clientCPUs, _ := procstat.AllowedCPUs() // the client inherits this process's pin
	stepSpecs := Steps(spec, e.Conns, clientCPUs, tmp.Name())
	stepsName, err := e.writeStepsFile(stepSpecs)
	if stepsName != "" {
		defer os.Remove(stepsName)
	}
	if err != nil {
		return err
	}
	c, err := e.start(stepsName)
	if err != nil {
		return err
	}

	smp := &sampler{}
	go smp.run(c.done, c.cmd.Process.Pid, loadgen.HostPort(spec.Target), e.SampleEvery)

	f, err := os.Open(tmp.Name())
	if err != nil {
		return fmt.Errorf("extclient: %w", err)
	}
	defer f.Close()
	rr := &recordRelay{
		tail: &tailer{r: bufio.NewReader(f)}, smp: smp, sink: sink, prog: prog,
		steps: stepSpecs, clientCPUs: clientCPUs, serverCPUs: e.ServerCPUs,
	}
	rr.begin()
	interrupted, err := c.follow(ctx, rr.emit)
	if err != nil {
		return err
	}
	rr.tail.final = true
	if err := rr.emit(); err != nil {
		return err
	}
	if interrupted {
		return ctx.Err()
	}
	return e.outcome(c.werr, rr.failedSteps, rr.n)
}

// writeStepsFile writes the client's step specs to a temporary file and
// returns its name (empty when it was not created); the caller removes it.
func (e *External) writeStepsFile(stepSpecs []StepSpec) (string, error) {
	stepsFile, err := os.CreateTemp("", "rpclab-"+e.Lang+"-*.steps.jsonl")
	if err != nil {
		return "", fmt.Errorf("extclient: %w", err)
	}
	if err := WriteSteps(stepsFile, stepSpecs); err != nil {
		stepsFile.Close()
		return stepsFile.Name(), err
	}
	if err := stepsFile.Close(); err != nil {
		return stepsFile.Name(), fmt.Errorf("extclient: %w", err)
	}
	return stepsFile.Name(), nil
}

// clientProc is a started client process. done closes when it has exited
// and its output is flushed; werr is then its Wait error.
type clientProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	werr error
}

// start starts clients/<lang>/rpclab-client on the steps file, in its own
// process group, relaying its output whole lines at a time to e.Stderr.
func (e *External) start(stepsName string) (*clientProc, error) {
	cmd := exec.Command(filepath.Join(e.Dir, "rpclab-client"), "--steps", stepsName)
	cmd.Dir = e.Dir
	// The client's lines are relayed whole: a client may print one line in
	// several writes (Java's printf does), and our own progress lines go to
	// the same stream between them.
	relay := &lineWriter{w: e.Stderr}
	cmd.Stdout, cmd.Stderr = relay, relay
	// A grandchild that keeps the pipe open must not hold up Wait.
	cmd.WaitDelay = 2 * time.Second
	cmd.SysProcAttr = procstat.DieWithParent(&syscall.SysProcAttr{Setpgid: true})
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("extclient: start the %s client: %w", e.Lang, err)
	}
	c := &clientProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.werr = cmd.Wait()
		if errors.Is(c.werr, exec.ErrWaitDelay) {
			c.werr = nil // the client exited 0; only a straggler's output is cut
		}
		relay.Flush()
		close(c.done)
	}()
	return c, nil
}

// follow calls emit every 100ms until the client exits. When ctx ends it
// sends the client's group SIGTERM, then SIGKILL 5s later if it is still
// running, and reports interrupted; when emit fails it kills the group
// and returns emit's error once the client has exited.
func (c *clientProc) follow(ctx context.Context, emit func() error) (interrupted bool, err error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := emit(); err != nil {
				_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
				<-c.done
				return interrupted, err
			}
		case <-c.done:
			return interrupted, nil
		case <-ctx.Done():
			if !interrupted {
				interrupted = true
				_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
				go c.killAfter(5 * time.Second)
			}
		}
	}
}

// killAfter sends the client's group SIGKILL unless it exits within d.
func (c *clientProc) killAfter(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// recordRelay passes the records the client appends on to sink, each with
// the connections and host CPU the sampler saw in its interval, and tells
// prog of each step's start and end.
type recordRelay struct {
	tail       *tailer
	smp        *sampler
	sink       func(*result.Record) error
	prog       loadgen.Progress
	steps      []StepSpec
	clientCPUs []int
	serverCPUs []int

	n           int // records passed on
	failedSteps int // of them, failed
}

// stepAt is the step at index i, for progress before its record arrives.
func (rr *recordRelay) stepAt(i int) loadgen.Step {
	st := rr.steps[i]
	m, err := loadgen.ParseConnMode(st.Conn)
	if err != nil { // a C-core layout: no ConnMode of the Go client
		m = loadgen.ConnMode{Kind: loadgen.ConnKind(st.Conn)}
	}
	return loadgen.Step{Conn: m, RPC: st.RPC, Inflight: st.Inflight}
}

// begin tells prog that the first step started.
func (rr *recordRelay) begin() {
	if len(rr.steps) > 0 {
		rr.prog.Started(0, len(rr.steps), rr.stepAt(0))
	}
}

// emit passes on every complete record written since the last call.
func (rr *recordRelay) emit() error {
	steps := len(rr.steps)
	recs, err := rr.tail.next()
	for i := range recs {
		r := &recs[i]
		rr.observe(r)
		if r.Status == result.StatusFailed {
			rr.failedSteps++
		}
		if serr := rr.sink(r); serr != nil {
			return serr
		}
		rr.prog.Ended(rr.n, steps, loadgen.Step{Conn: loadgen.ConnModeOf(r.Spec), RPC: r.Spec.RPC, Inflight: r.Spec.Inflight}, r)
		rr.n++
		if rr.n < steps {
			rr.prog.Started(rr.n, steps, rr.stepAt(rr.n))
		}
	}
	return err
}

// observe sets r's conns_observed from the sampler and, when the client did
// not, its host_cpu from the host's CPU times around its interval.
func (rr *recordRelay) observe(r *result.Record) {
	r.ConnsObserved = rr.smp.maxIn(r.StartedAt, time.Duration(r.DurationNS), r.ConnsObserved)
	if r.HostCPU == nil {
		cpus := r.Env.ClientCPUs
		if len(cpus) == 0 {
			cpus = rr.clientCPUs
		}
		s0, s1 := rr.smp.hostAt(r.StartedAt, time.Duration(r.DurationNS))
		r.HostCPU = loadgen.HostCPU(s0, s1, cpus, rr.serverCPUs)
	}
}

// outcome is a finished client's error from its Wait error werr and the
// failed steps of its n records (docs/clients.md, "Exit codes").
func (e *External) outcome(werr error, failedSteps, n int) error {
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code := ee.ExitCode()
		if code == 2 {
			return usage.Errorf(ErrClientFlags, "the %s client rejected its flags (see its message above)", e.Lang)
		}
		if code == 1 && failedSteps > 0 {
			// docs/clients.md, "Exit codes": 1 when a step failed, its
			// record written. The records say why; the run itself held.
			return fmt.Errorf("extclient: the %s client exited 1: %d of %d %w", e.Lang, failedSteps, n, ErrStepsFailed)
		}
		return &ExitError{Lang: e.Lang, Code: code}
	}
	if werr != nil {
		return fmt.Errorf("extclient: the %s client: %w", e.Lang, werr)
	}
	if failedSteps > 0 {
		return fmt.Errorf("extclient: %d of %d %w", failedSteps, n, ErrStepsFailed)
	}
	return nil
}

// lineWriter passes on only whole lines, each in one Write, and keeps a
// partial line until its end arrives or Flush is called (or it grows past
// maxPartialLine, which is passed on as it is).
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	i := bytes.LastIndexByte(l.buf, '\n')
	if i < 0 && len(l.buf) > maxPartialLine {
		i = len(l.buf) - 1
	}
	if i >= 0 {
		_, err := l.w.Write(l.buf[:i+1])
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
		if err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// maxPartialLine bounds what a lineWriter holds back waiting for a newline.
const maxPartialLine = 64 << 10

// Flush writes a partial last line, ending it with a newline.
func (l *lineWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		_, _ = l.w.Write(append(l.buf, '\n'))
		l.buf = l.buf[:0]
	}
}

// tailer reads complete lines appended to a growing file.
type tailer struct {
	r       *bufio.Reader
	partial []byte
	line    int
	final   bool // the writer has exited: a partial line is truncated
}

func (t *tailer) next() ([]result.Record, error) {
	var recs []result.Record
	for {
		b, err := t.r.ReadBytes('\n')
		t.partial = append(t.partial, b...)
		if errors.Is(err, io.EOF) {
			if t.final && len(strings.TrimSpace(string(t.partial))) > 0 {
				return recs, fmt.Errorf("extclient: the client's last record is truncated: %w", result.ErrTruncated)
			}
			return recs, nil
		}
		if err != nil {
			return recs, fmt.Errorf("extclient: read client records: %w", err)
		}
		t.line++
		line := t.partial
		t.partial = nil
		got, err := result.Read(strings.NewReader(string(line)))
		if err != nil {
			return recs, fmt.Errorf("extclient: the client's record %d: %w", t.line, err)
		}
		recs = append(recs, got...)
	}
}

// sampler counts a process's connections to a target over time.
type sampler struct {
	mu      sync.Mutex
	samples []sample
}

type sample struct {
	at time.Time
	n  int
	// host is the host's CPU times read with the count (nil: not read).
	host *procstat.CPUStat
}

func (s *sampler) run(done <-chan struct{}, pid int, target string, every time.Duration) {
	// Off the client's CPUs (it inherited the driver's pin), so sampling
	// does not take the CPU the client is measured on; see docs/results.md.
	_, restore, _ := procstat.LockThreadOffCPUsOf(pid)
	defer restore()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		x := sample{at: time.Now(), n: -1}
		if st, err := procstat.ReadCPUStat(); err == nil {
			x.host = &st
		}
		if n, err := procstat.ConnsTo(pid, target); err == nil {
			x.n = n
		}
		s.mu.Lock()
		s.samples = append(s.samples, x)
		s.mu.Unlock()
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// maxIn is the most connections seen within [start, start+d], or def when
// no sample fell inside.
func (s *sampler) maxIn(start time.Time, d time.Duration, def int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	best, seen := 0, false
	end := start.Add(d)
	for _, x := range s.samples {
		if x.n >= 0 && !x.at.Before(start) && !x.at.After(end) {
			seen = true
			best = max(best, x.n)
		}
	}
	if !seen {
		return def
	}
	return best
}

// hostAt is the host's CPU times read nearest start and nearest start+d
// (the sampler reads them every SampleEvery, so each is that close to
// the record's interval); nil when no two distinct reads were made.
func (s *sampler) hostAt(start time.Time, d time.Duration) (s0, s1 *procstat.CPUStat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	end := start.Add(d)
	var a, b *sample
	for i := range s.samples {
		x := &s.samples[i]
		if x.host == nil {
			continue
		}
		if a == nil || absDur(x.at.Sub(start)) < absDur(a.at.Sub(start)) {
			a = x
		}
		if b == nil || absDur(x.at.Sub(end)) < absDur(b.at.Sub(end)) {
			b = x
		}
	}
	if a == nil || b == nil || !b.at.After(a.at) {
		return nil, nil
	}
	return a.host, b.host
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
