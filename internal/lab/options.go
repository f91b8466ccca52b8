// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rpclab/rpclab/internal/netem"
)

// Option configures a Session. Options are applied in order; New validates
// the result and returns an error wrapping ErrInvalidOption for a bad value.
type Option func(*config) error

// Server is the child server a session starts when it has no target.
type Server struct {
	// Name is the implementation ("go", "cpp"), written in every record's
	// spec.server.
	Name string
	// Argv runs the server; its first line on stdout must be
	// "listening on ADDR".
	Argv []string
	// Prepare, if set, gives Argv when the session starts (it may build
	// the server); Argv is then unused.
	Prepare func(ctx context.Context) ([]string, error)
	// PinArgs, if set, gives the server its CPUs as arguments (the Go
	// server pins itself, so its GOMAXPROCS matches); otherwise the child
	// is pinned from the fork on.
	PinArgs func(cpus []int) []string
}

// DefaultStartTimeout is how long a child (server or proxy) may take to
// print its address, when WithStartTimeout is not given.
const DefaultStartTimeout = 10 * time.Second

type config struct {
	target       string
	server       *Server
	pin          bool
	network      *netem.Network
	queue        int
	front        bool
	exe          string
	startTimeout time.Duration
	outputs      []Output
	inputs       []string
	force        bool
	progress     func(Event)
}

func defaultConfig() *config {
	exe, _ := os.Executable()
	return &config{pin: true, exe: exe, startTimeout: DefaultStartTimeout, progress: func(Event) {}}
}

func (c *config) validate() error {
	if c.target == "" && c.server == nil {
		return fmt.Errorf("%w: neither a target nor a server to start", ErrInvalidOption)
	}
	if c.server != nil && len(c.server.Argv) == 0 && c.server.Prepare == nil {
		return fmt.Errorf("%w: the server has no command", ErrInvalidOption)
	}
	if c.network != nil {
		if err := c.network.Validate(); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidOption, err)
		}
		if c.queue <= 0 {
			return fmt.Errorf("%w: netem queue of %d bytes: must be positive", ErrInvalidOption, c.queue)
		}
		if c.exe == "" {
			return fmt.Errorf("%w: no executable to run the netem proxy", ErrInvalidOption)
		}
	}
	if c.startTimeout <= 0 {
		return fmt.Errorf("%w: start timeout %v: must be positive", ErrInvalidOption, c.startTimeout)
	}
	return nil
}

// WithTarget measures a server already running at addr (host:port)
// instead of starting one. The default: no target, so WithServer is needed.
func WithTarget(addr string) Option {
	return func(c *config) error {
		c.target = addr
		return nil
	}
}

// WithServer starts s as a child process when there is no target. The
// default: none.
func WithServer(s Server) Option {
	return func(c *config) error {
		c.server = &s
		return nil
	}
}

// WithPin says whether a child server and this process get separate CPUs:
// with two or more usable CPUs the server gets the last, this process the
// others. The default: true. Without a child server nothing is pinned.
func WithPin(pin bool) Option {
	return func(c *config) error {
		c.pin = pin
		return nil
	}
}

// WithNetem puts rpclab's netem proxy, emulating n with queue bytes in
// flight per direction, in front of the target (front true: Start starts it
// and Target is its address) or in front of any address asked for through
// Session.Proxy (front false: bulk's listeners). The default: no proxy.
func WithNetem(n netem.Network, queue int, front bool) Option {
	return func(c *config) error {
		c.network, c.queue, c.front = &n, queue, front
		return nil
	}
}

// WithExecutable is the rpclab binary the netem proxy runs as ("rpclab
// netem"). The default: this process's own executable.
func WithExecutable(path string) Option {
	return func(c *config) error {
		c.exe = path
		return nil
	}
}

// WithStartTimeout bounds how long a child may take to print its address.
// The default: DefaultStartTimeout; zero or negative is an error.
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) error {
		c.startTimeout = d
		return nil
	}
}

// WithOutputs are the files and folders the session writes. New checks
// them before anything runs (see CheckOutputs) and opens the files with
// Open set. The default: none.
func WithOutputs(outs ...Output) Option {
	return func(c *config) error {
		c.outputs = append(c.outputs, outs...)
		return nil
	}
}

// WithInputs are files the session reads; no output may be one of them.
func WithInputs(paths ...string) Option {
	return func(c *config) error {
		c.inputs = append(c.inputs, paths...)
		return nil
	}
}

// WithForce allows outputs marked Keep to overwrite an existing file. The
// default: false, an existing records file is an error wrapping ErrExists.
func WithForce(force bool) Option {
	return func(c *config) error {
		c.force = force
		return nil
	}
}

// WithProgress is told what the session does (children started, steps
// started and ended); it is called from one goroutine at a time. The
// default: nothing is told.
func WithProgress(f func(Event)) Option {
	return func(c *config) error {
		if f == nil {
			return fmt.Errorf("%w: nil progress callback", ErrInvalidOption)
		}
		c.progress = f
		return nil
	}
}
