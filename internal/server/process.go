// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
)

// ListeningPrefix starts the first line every rpclab server prints on stdout;
// the address it listens on follows.
const ListeningPrefix = "listening on "

// Process is a server running as a child process, so that it never shares
// the client's runtime, scheduler or garbage collector.
type Process struct {
	// Addr is the address the server printed it listens on.
	Addr string
	// Pid is the child's process id.
	Pid  int
	cmd  *exec.Cmd
	done chan struct{}
	werr error

	stopOnce sync.Once
	stderr   *lockedWriter
}

// StartProcess runs argv (a server that prints "listening on ADDR" first)
// and waits up to startTimeout for that line. If cpus is not empty the child
// is pinned to them. The child is stopped when ctx ends or Stop is called.
func StartProcess(ctx context.Context, argv []string, cpus []int, startTimeout time.Duration) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("server: no command to start")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), stderr: &lockedWriter{}}
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = procstat.DieWithParent(nil)
	// Pinned from the fork on, so a server that sizes its thread pools from
	// its CPU mask at start (the C++ server's --num-cqs) sees its own CPUs.
	pinned, err := procstat.StartPinned(cmd, cpus)
	if err != nil {
		return nil, fmt.Errorf("server: start %s: %w", argv[0], err)
	}
	p.Pid = cmd.Process.Pid
	if !pinned && len(cpus) > 0 {
		// Best effort: pinning is an optimisation, not a requirement.
		_ = procstat.Pin(p.Pid, cpus)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		if first {
			close(lines)
		}
	}()
	go func() {
		p.werr = cmd.Wait()
		close(p.done)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case l, ok := <-lines:
		if !ok || !strings.HasPrefix(l, ListeningPrefix) {
			p.Stop()
			return nil, fmt.Errorf("server: %s did not start: first line %q; stderr: %s", argv[0], l, p.Stderr())
		}
		p.Addr = strings.TrimSpace(strings.TrimPrefix(l, ListeningPrefix))
	case <-timer.C:
		p.Stop()
		return nil, fmt.Errorf("server: %s printed no address within %v; stderr: %s", argv[0], startTimeout, p.Stderr())
	case <-ctx.Done():
		p.Stop()
		return nil, ctx.Err()
	}
	go func() {
		select {
		case <-ctx.Done():
			p.Stop()
		case <-p.done:
		}
	}()
	return p, nil
}

// Done is closed when the child has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit describes how the child ended: its exit status or the signal that
// ended it ("exit status 3", "signal: killed"); "" while it runs.
func (p *Process) Exit() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	if p.werr == nil {
		return "exit status 0"
	}
	return p.werr.Error()
}

// Stderr returns what the child wrote to stderr so far.
func (p *Process) Stderr() string {
	p.stderr.mu.Lock()
	defer p.stderr.mu.Unlock()
	return strings.TrimSpace(p.stderr.w.String())
}

// Stop sends SIGTERM, waits up to 5 s, then kills. It is safe to call more
// than once and after the child has exited.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(5 * time.Second)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	var ee *exec.ExitError
	if p.werr != nil && !errors.As(p.werr, &ee) {
		return fmt.Errorf("server: %w", p.werr)
	}
	return nil
}

// Kill ends the child at once with SIGKILL, as a crash would.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

type lockedWriter struct {
	mu sync.Mutex
	w  bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 64<<10 { // keep only the start of a noisy stderr
		return len(b), nil
	}
	return l.w.Write(b)
}
