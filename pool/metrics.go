// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// scopeName is the OpenTelemetry instrumentation scope (the meter's name)
// of the pool's metrics: the package's import path.
const scopeName = "github.com/rpclab/rpclab/pool"

// Attribute keys of the pool's metrics.
const (
	attrTarget     = attribute.Key("rpclab.pool.target")
	attrConnection = attribute.Key("rpclab.pool.connection")
	attrDirection  = attribute.Key("rpclab.pool.direction")
)

// metrics are a pool's OpenTelemetry instruments. rpclab.pool.inflight
// and rpclab.pool.picks are asynchronous: a callback reads them, at
// collection, from the counters the pick keeps anyway, so the RPC path
// does nothing more for metrics, with or without a provider. The others
// change off the RPC path. A nil *metrics does nothing.
type metrics struct {
	redials, resizes metric.Int64Counter
	sizeUD           metric.Int64UpDownCounter
	inflight, picks  metric.Int64Observable
	reg              metric.Registration
	target           metric.MeasurementOption // rpclab.pool.target
	grow, shrink     metric.MeasurementOption // and the direction
}

// newMetrics makes p's instruments with p's meter provider.
func newMetrics(p *Pool) (*metrics, error) {
	mp := p.cfg.meters
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(scopeName, metric.WithInstrumentationVersion(moduleVersion()))
	t := attrTarget.String(p.target)
	m := &metrics{
		target: metric.WithAttributeSet(attribute.NewSet(t)),
		grow:   metric.WithAttributeSet(attribute.NewSet(t, attrDirection.String("grow"))),
		shrink: metric.WithAttributeSet(attribute.NewSet(t, attrDirection.String("shrink"))),
	}
	var err error
	wrap := func(name string, e error) {
		if err == nil && e != nil {
			err = fmt.Errorf("%w: meter provider: instrument %s: %w", ErrInvalidOption, name, e)
		}
	}
	var e error
	m.sizeUD, e = meter.Int64UpDownCounter("rpclab.pool.size", metric.WithUnit("{connection}"),
		metric.WithDescription("Connections (channels) in the pool."))
	wrap("rpclab.pool.size", e)
	inflight, e := meter.Int64ObservableUpDownCounter("rpclab.pool.inflight", metric.WithUnit("{request}"),
		metric.WithDescription("RPCs and streams in flight, per connection."))
	wrap("rpclab.pool.inflight", e)
	picks, e := meter.Int64ObservableCounter("rpclab.pool.picks", metric.WithUnit("{pick}"),
		metric.WithDescription("RPCs and streams started, per connection."))
	wrap("rpclab.pool.picks", e)
	m.redials, e = meter.Int64Counter("rpclab.pool.redials", metric.WithUnit("{redial}"),
		metric.WithDescription("Connections replaced after TRANSIENT_FAILURE or an outside shutdown."))
	wrap("rpclab.pool.redials", e)
	m.resizes, e = meter.Int64Counter("rpclab.pool.resizes", metric.WithUnit("{resize}"),
		metric.WithDescription("Connections added or retired by growth at the stream limit or the adaptive size."))
	wrap("rpclab.pool.resizes", e)
	if err != nil {
		return nil, err
	}
	m.inflight, m.picks = inflight, picks
	m.reg, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		p.observe(o, inflight, picks)
		return nil
	}, inflight, picks)
	if err != nil {
		return nil, fmt.Errorf("%w: meter provider: register callback: %w", ErrInvalidOption, err)
	}
	return m, nil
}

// observe reports the RPCs in flight and started per slot id: the
// current connections, those replaced but still draining, and those
// closed since.
func (p *Pool) observe(o metric.Observer, inflight, picks metric.Int64Observable) {
	p.mu.Lock()
	defer p.mu.Unlock()
	type sum struct {
		in    int64
		picks uint64
	}
	by := map[int]*sum{}
	at := func(id int) *sum {
		s := by[id]
		if s == nil {
			s = &sum{}
			by[id] = s
		}
		return s
	}
	add := func(c *conn) {
		s, in := at(c.id), max(c.inflight.Load(), 0)
		s.in += in
		s.picks += c.completed.Load() + uint64(in)
	}
	live := map[int]bool{}
	for _, s := range p.list() {
		add(s.cur.Load())
		live[s.id] = true
	}
	for c := range p.retired {
		add(c)
	}
	for id, n := range p.donePicks {
		at(id).picks += n
	}
	t := attrTarget.String(p.target)
	for id, s := range by {
		opt := metric.WithAttributeSet(attribute.NewSet(t, attrConnection.Int(id)))
		if live[id] || s.in > 0 {
			o.ObserveInt64(inflight, s.in, opt)
		}
		o.ObserveInt64(picks, int64(s.picks), opt)
	}
}

func (m *metrics) sized(n int) {
	if m != nil && n != 0 {
		m.sizeUD.Add(context.Background(), int64(n), m.target)
	}
}

func (m *metrics) resized(n int) {
	if m == nil {
		return
	}
	m.sized(n)
	if n > 0 {
		m.resizes.Add(context.Background(), int64(n), m.grow)
	} else {
		m.resizes.Add(context.Background(), int64(-n), m.shrink)
	}
}

func (m *metrics) redialed() {
	if m != nil {
		m.redials.Add(context.Background(), 1, m.target)
	}
}

func (m *metrics) unregister() {
	if m != nil && m.reg != nil {
		_ = m.reg.Unregister()
	}
}

// moduleVersion is the pool module's version as the build knows it (the
// instrumentation scope's version): "v1.2.3" in a program that requires
// it, "" where the build records none (a replace to a folder, tests).
var moduleVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if bi.Main.Path == scopeName {
		return cleanVersion(bi.Main.Version)
	}
	for _, d := range bi.Deps {
		if d.Path == scopeName {
			return cleanVersion(d.Version)
		}
	}
	return ""
})

func cleanVersion(v string) string {
	if v == "(devel)" {
		return ""
	}
	return v
}
