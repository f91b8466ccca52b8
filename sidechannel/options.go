// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// Option configures a Server or a Client. Options are applied in order;
// NewServer and NewClient validate the result and return an error wrapping
// ErrInvalidOption for a bad value. Options that only one side reads are
// ignored by the other.
type Option func(*config) error

type config struct {
	tls           *tls.Config
	helloTimeout  time.Duration
	expiry        time.Duration
	writeTimeout  time.Duration
	helloExpiry   time.Duration
	maxPending    int
	maxHellos     int
	maxHandshakes int
	now           func() time.Time
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Defaults, in one place.
const (
	// DefaultHelloTimeout bounds how long the server reads a connection's
	// first bytes and a sidechannel's hello (and TLS handshake), and how
	// long the client takes to send its hello. gRPC clients send their
	// preface at once, so only a stalled or hostile peer meets it.
	DefaultHelloTimeout = 10 * time.Second
	// DefaultExpiry is how long an id waits for its other half (the hello
	// for a call, or the call for a hello).
	DefaultExpiry = 10 * time.Second
	// DefaultHelloExpiry is how long a hello waits for its call (at most
	// the expiry). A client sends its hello and starts its call at once,
	// so a real hello waits a round trip or two; one that waits longer is
	// a stranger's or its call failed.
	DefaultHelloExpiry = 3 * time.Second
	// DefaultWriteTimeout bounds each server Write: a client that stops
	// reading for this long fails the write and so the call.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxPending bounds the calls waiting for their hello; each
	// holds a handler.
	DefaultMaxPending = 1024
	// DefaultMaxHellos bounds the hellos waiting for their call; each
	// holds a file descriptor. Past it the oldest hello of the peer that
	// holds the most is closed to admit the new one.
	DefaultMaxHellos = 1024
	// DefaultMaxHandshakes bounds the connections read for their first
	// bytes at once, gRPC's and sidechannels'; a connection accepted above
	// it is closed at once.
	DefaultMaxHandshakes = 1024
)

func defaultConfig() *config {
	var d net.Dialer
	return &config{
		helloTimeout:  DefaultHelloTimeout,
		expiry:        DefaultExpiry,
		helloExpiry:   DefaultHelloExpiry,
		writeTimeout:  DefaultWriteTimeout,
		maxPending:    DefaultMaxPending,
		maxHellos:     DefaultMaxHellos,
		maxHandshakes: DefaultMaxHandshakes,
		now:           time.Now,
		dial:          d.DialContext,
	}
}

func newConfig(opts []Option) (*config, error) {
	c := defaultConfig()
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *config) validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"hello timeout", c.helloTimeout}, {"expiry", c.expiry}, {"hello expiry", c.helloExpiry}} {
		if d.v <= 0 {
			return fmt.Errorf("%w: %s %v must be positive", ErrInvalidOption, d.name, d.v)
		}
	}
	if c.writeTimeout < 0 {
		return fmt.Errorf("%w: write timeout %v must not be negative", ErrInvalidOption, c.writeTimeout)
	}
	if c.maxPending < 1 || c.maxHellos < 1 || c.maxHandshakes < 1 {
		return fmt.Errorf("%w: max pending %d, max hellos %d and max handshakes %d must be at least 1", ErrInvalidOption, c.maxPending, c.maxHellos, c.maxHandshakes)
	}
	if c.now == nil || c.dial == nil {
		return fmt.Errorf("%w: nil clock or dialer", ErrInvalidOption)
	}
	return nil
}

// WithTLS makes the sidechannel run TLS with cfg after the magic (default:
// none). Give the server the tls.Config of its gRPC credentials and the
// client its own: the id then travels only inside TLS, as the call's
// metadata does. A nil cfg means no TLS.
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) error { c.tls = cfg; return nil }
}

// WithHelloTimeout sets DefaultHelloTimeout's value; it must be positive.
func WithHelloTimeout(d time.Duration) Option {
	return func(c *config) error { c.helloTimeout = d; return nil }
}

// WithExpiry sets how long an id waits for its other half (default
// DefaultExpiry); it must be positive.
func WithExpiry(d time.Duration) Option {
	return func(c *config) error { c.expiry = d; return nil }
}

// WithWriteTimeout sets how long one server Write may block (default
// DefaultWriteTimeout); 0 means no limit but the call's deadline.
func WithWriteTimeout(d time.Duration) Option {
	return func(c *config) error { c.writeTimeout = d; return nil }
}

// WithHelloExpiry sets how long a hello waits for its call (default
// DefaultHelloExpiry, and never longer than the expiry); it must be
// positive.
func WithHelloExpiry(d time.Duration) Option {
	return func(c *config) error { c.helloExpiry = d; return nil }
}

// WithMaxPending sets how many calls may wait for their hello at once
// (default DefaultMaxPending); at least 1. Hellos never count against it.
func WithMaxPending(n int) Option {
	return func(c *config) error { c.maxPending = n; return nil }
}

// WithMaxHellos sets how many hellos may wait for their call at once
// (default DefaultMaxHellos); at least 1. Past it a new hello is admitted
// and the oldest of the peer holding the most is closed, so a stranger's
// flood of hellos cannot keep a real client's out.
func WithMaxHellos(n int) Option {
	return func(c *config) error { c.maxHellos = n; return nil }
}

// WithMaxHandshakes sets how many accepted connections may be read for
// their first bytes at once (default DefaultMaxHandshakes); at least 1.
func WithMaxHandshakes(n int) Option {
	return func(c *config) error { c.maxHandshakes = n; return nil }
}

// WithClock sets the clock that ids expire by (default time.Now); tests
// move it. Socket deadlines always follow the real clock.
func WithClock(now func() time.Time) Option {
	return func(c *config) error { c.now = now; return nil }
}

// WithDialer sets how the client dials (default a net.Dialer's
// DialContext).
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(c *config) error { c.dial = dial; return nil }
}
