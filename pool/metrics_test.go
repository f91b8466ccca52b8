// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rpclab/rpclab/pool/internal/pooltest"
)

// reading is one collection of the pool's metrics: each instrument's
// points, keyed by their attributes' encoding.
type reading map[string]map[string]int64

// read collects r and keeps the points of the pool's scope.
func read(t *testing.T, ctx context.Context, r *sdkmetric.ManualReader) (reading, map[string]metricdata.Metrics) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		t.Fatalf("collect: %v", err)
	}
	out, raw := reading{}, map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scopeName {
			continue
		}
		for _, m := range sm.Metrics {
			raw[m.Name] = m
			pts := map[string]int64{}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s: data %T, want a Sum[int64]", m.Name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				pts[dp.Attributes.Encoded(attribute.DefaultEncoder())] = dp.Value
			}
			out[m.Name] = pts
		}
	}
	return out, raw
}

// total is the sum of an instrument's points.
func (r reading) total(name string) int64 {
	var n int64
	for _, v := range r[name] {
		n += v
	}
	return n
}

// at is the point of name with these attributes.
func (r reading) at(name string, kv ...attribute.KeyValue) (int64, bool) {
	s := attribute.NewSet(kv...)
	v, ok := r[name][s.Encoded(attribute.DefaultEncoder())]
	return v, ok
}

// TestMetrics: the instruments of docs/pool.md "Metrics", read back
// through the OpenTelemetry SDK's ManualReader: size, in flight and picks
// per connection, resizes by growth both ways, redials, their units and
// kinds, and size back to 0 at Close.
func TestMetrics(t *testing.T) {
	ctx := pooltest.Context(t)
	srv := startHoldServer(t, 4)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	p, err := New(srv.addr, plaintext, WithSize(1), WithStreamLimit(4, 8),
		WithGrowthIdle(200*time.Millisecond), WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	target := attrTarget.String(srv.addr)
	conn := func(i int) attribute.KeyValue { return attrConnection.Int(i) }

	r, raw := read(t, ctx, reader)
	if v, _ := r.at("rpclab.pool.size", target); v != 1 {
		t.Errorf("rpclab.pool.size after New: got %d, want 1", v)
	}
	checkKinds(t, raw)

	wait := srv.hold(ctx, t, p, 16, 16)
	r, _ = read(t, ctx, reader)
	if v, _ := r.at("rpclab.pool.size", target); v != 4 {
		t.Errorf("rpclab.pool.size with 16 held calls: got %d, want 4", v)
	}
	for i := range 4 {
		if v, ok := r.at("rpclab.pool.inflight", target, conn(i)); v != 4 {
			t.Errorf("rpclab.pool.inflight connection %d: got %d (reported %v), want 4", i, v, ok)
		}
		if v, _ := r.at("rpclab.pool.picks", target, conn(i)); v != 4 {
			t.Errorf("rpclab.pool.picks connection %d: got %d, want 4", i, v)
		}
	}
	if v, _ := r.at("rpclab.pool.resizes", target, attrDirection.String("grow")); v != 3 {
		t.Errorf("rpclab.pool.resizes grow: got %d, want 3", v)
	}

	srv.unblock()
	wait()
	waitFor(ctx, t, "the grown connections retired", func() bool { return p.Size() == 1 })
	r, _ = read(t, ctx, reader)
	if v, _ := r.at("rpclab.pool.size", target); v != 1 {
		t.Errorf("rpclab.pool.size after retiring: got %d, want 1", v)
	}
	if v, _ := r.at("rpclab.pool.resizes", target, attrDirection.String("shrink")); v != 3 {
		t.Errorf("rpclab.pool.resizes shrink: got %d, want 3", v)
	}
	if got := r.total("rpclab.pool.inflight"); got != 0 {
		t.Errorf("rpclab.pool.inflight once the calls ended: got %d, want 0", got)
	}
	// Picks stay counted after their connection retired: a counter never
	// goes back.
	if got := r.total("rpclab.pool.picks"); got != 16 {
		t.Errorf("rpclab.pool.picks after retiring: got %d, want 16", got)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	r, _ = read(t, ctx, reader)
	if v, _ := r.at("rpclab.pool.size", target); v != 0 {
		t.Errorf("rpclab.pool.size after Close: got %d, want 0", v)
	}
}

// TestMetricsRedials: a connection replaced after TRANSIENT_FAILURE counts
// in rpclab.pool.redials.
func TestMetricsRedials(t *testing.T) {
	ctx := pooltest.Context(t)
	lis := pooltest.Listen(t)
	addr := lis.Addr().String()
	lis.Close() // nothing listens: every dial is refused
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	newPool(t, addr, WithSize(1), WithRedialAfter(20*time.Millisecond), WithMeterProvider(mp))
	waitFor(ctx, t, "a redial counted", func() bool {
		r, _ := read(t, ctx, reader)
		v, _ := r.at("rpclab.pool.redials", attrTarget.String(addr))
		return v >= 1
	})
}

// TestMetricsGlobalProvider: without WithMeterProvider the pool reports
// to OpenTelemetry's global provider.
func TestMetricsGlobalProvider(t *testing.T) {
	ctx := pooltest.Context(t)
	srv := startServer(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	prev := otel.GetMeterProvider()
	otel.SetMeterProvider(mp)
	t.Cleanup(func() {
		otel.SetMeterProvider(prev)
		_ = mp.Shutdown(context.Background())
	})
	p := newPool(t, srv.addr, WithSize(2))
	for range 3 {
		if err := ping(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	r, _ := read(t, ctx, reader)
	if got := r.total("rpclab.pool.picks"); got != 3 {
		t.Errorf("rpclab.pool.picks through the global provider: got %d, want 3", got)
	}
}

// checkKinds checks the units and monotonicity of the instruments read.
func checkKinds(t *testing.T, raw map[string]metricdata.Metrics) {
	t.Helper()
	for name, want := range map[string]struct {
		unit string
		mono bool
	}{
		"rpclab.pool.size":     {"{connection}", false},
		"rpclab.pool.inflight": {"{request}", false},
		"rpclab.pool.picks":    {"{pick}", true},
	} {
		m, ok := raw[name]
		if !ok {
			t.Errorf("%s: not reported", name)
			continue
		}
		if mono := m.Data.(metricdata.Sum[int64]).IsMonotonic; m.Unit != want.unit || mono != want.mono {
			t.Errorf("%s: unit %q monotonic %v, want %q %v", name, m.Unit, mono, want.unit, want.mono)
		}
	}
}
