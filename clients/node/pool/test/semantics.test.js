// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// docs/pool.md's rules against a real grpc-js server on loopback: close
// (drain, cancel, twice, use after, nothing left behind), redial, growth at
// the stream limit, and the OpenTelemetry metrics read back through
// @opentelemetry/sdk-metrics' in-memory exporter.

'use strict';

const assert = require('node:assert/strict');
const net = require('node:net');
const path = require('node:path');
const { test } = require('node:test');

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');

const { ChannelPool } = require('..');
const { connectionsTo } = require('./kernel');

const insecure = grpc.credentials.createInsecure();
const TIMEOUT_MS = 20000;
const deadline = () => Date.now() + TIMEOUT_MS;
const HOLD = 7; // a request with this response_size waits at the server for the gate

const PROTO_DIR = path.resolve(__dirname, '..', '..', '..', '..', 'proto');
const def = protoLoader.loadSync('grpc/testing/benchmark_service.proto', { includeDirs: [PROTO_DIR], keepCase: true });
const { BenchmarkService } = grpc.loadPackageDefinition(def).grpc.testing;

/** A server that holds each HOLD call until open(); resolves to its parts. */
async function serveGated() {
  const held = [];
  const waiters = [];
  const wake = () => {
    for (const w of waiters.splice(0)) (held.length >= w.n ? w.resolve : (x) => waiters.push(x))(w);
  };
  const server = new grpc.Server();
  server.addService(BenchmarkService.service, {
    UnaryCall: (call, callback) => {
      if (call.request.response_size !== HOLD) return callback(null, {});
      held.push(() => callback(null, {}));
      wake();
    },
    StreamingCall: (call) => {
      call.on('data', () => call.write({}));
      call.on('end', () => call.end());
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return {
    server,
    port,
    target: `127.0.0.1:${port}`,
    /** Resolves once n calls are held; rejects after TIMEOUT_MS. */
    heldAtLeast: (n) =>
      within(new Promise((resolve) => { waiters.push({ n, resolve }); wake(); }), `${n} held calls (got ${held.length})`),
    open: () => held.splice(0).forEach((f) => f()),
  };
}

function within(promise, what) {
  let timer;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

function unary(client, request = {}) {
  return new Promise((resolve, reject) =>
    client.UnaryCall(request, { deadline: deadline() }, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('close drains, then cancels; twice; use after; no timer left', async (t) => {
  const s = await serveGated();
  t.after(() => s.server.forceShutdown());
  const timers0 = timers();

  const pool = new ChannelPool(s.target, insecure, { size: 4 });
  await pool.connect(deadline());
  const client = new BenchmarkService(s.target, insecure, { channelOverride: pool });
  const drained = unary(client, { response_size: HOLD });
  await s.heldAtLeast(1);
  const closing = pool.close({ grace: TIMEOUT_MS });
  assert.throws(() => client.UnaryCall({}, () => {}), /shut down/, 'a call after close began');
  s.open();
  await drained; // finished OK during the drain
  await closing;

  const pool2 = new ChannelPool(s.target, insecure, { size: 4 });
  const client2 = new BenchmarkService(s.target, insecure, { channelOverride: pool2 });
  const cut = unary(client2, { response_size: HOLD }).then(() => assert.fail('a held call outlived close'), (e) => e);
  const stream = client2.StreamingCall({ deadline: deadline() });
  stream.on('error', () => {});
  const streamStatus = new Promise((resolve) => stream.on('status', resolve));
  await s.heldAtLeast(1);
  await pool2.close({ grace: 0 });
  assert.equal((await cut).code, grpc.status.CANCELLED);
  assert.equal((await streamStatus).code, grpc.status.CANCELLED, 'an open stream at close');
  await pool2.close(); // twice
  assert.throws(() => client2.UnaryCall({}, () => {}), /shut down/);
  await assert.rejects(pool2.connect(deadline()), /closed/);
  s.open();

  // grpc-js delivers the cancelled calls' statuses and tears its sessions
  // down on later turns of the event loop: yield turns (no timer) until the
  // kernel shows none of the pools' connections.
  const until = deadline();
  while ((connectionsTo(s.port) > 0 || timers() > timers0) && Date.now() < until) await new Promise(setImmediate);
  assert.equal(connectionsTo(s.port), 0, 'the pools\' connections after close');
  assert.equal(timers(), timers0, 'timers before and after');
  assert.deepEqual([pool.inflight(), pool2.inflight()], [[0, 0, 0, 0], [0, 0, 0, 0]]);
});

test('a channel stuck in TRANSIENT_FAILURE is redialled', async (t) => {
  const free = net.createServer();
  await new Promise((resolve) => free.listen(0, '127.0.0.1', resolve));
  const port = free.address().port;
  await new Promise((resolve) => free.close(resolve)); // nothing listens there now
  const pool = new ChannelPool(`127.0.0.1:${port}`, insecure, { size: 1, redialAfterMs: 50 });
  t.after(() => pool.close());
  const first = pool.channels[0];
  const client = new BenchmarkService('unused', insecure, { channelOverride: pool });
  const until = deadline();
  while (pool.redials === 0 && Date.now() < until) {
    const err = await unary(client).then(() => assert.fail('a call to nothing succeeded'), (e) => e);
    assert.equal(err.code, grpc.status.UNAVAILABLE);
  }
  assert.ok(pool.redials >= 1, `no redial within ${TIMEOUT_MS} ms`);
  assert.notEqual(pool.channels[0], first, 'the channel was not replaced');
});

/** Metrics as { name: { key: value } }: picks by connection, resizes by direction. */
async function readMetrics(reader, exporter) {
  await reader.forceFlush();
  const out = {};
  const batches = exporter.getMetrics();
  const last = batches[batches.length - 1];
  for (const sm of last ? last.scopeMetrics : []) {
    for (const m of sm.metrics) {
      const got = (out[m.descriptor.name] = {});
      for (const dp of m.dataPoints) {
        const a = dp.attributes;
        const key = a['rpclab.pool.direction'] ?? a['rpclab.pool.connection'] ?? 'all';
        got[key] = (got[key] || 0) + dp.value;
      }
    }
  }
  return out;
}

function meter() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3600000 });
  const provider = new MeterProvider({ readers: [reader] });
  return { provider, reader, exporter };
}

async function run16(t, s, options) {
  const m = meter();
  t.after(() => m.provider.shutdown());
  const pool = new ChannelPool(s.target, insecure, { size: 1, meterProvider: m.provider, ...options });
  const client = new BenchmarkService('unused', insecure, { channelOverride: pool });
  const calls = Array.from({ length: 16 }, () => unary(client, { response_size: HOLD }));
  await s.heldAtLeast(16);
  const conns = connectionsTo(s.port);
  const inflight = pool.inflight();
  s.open();
  await Promise.all(calls);
  const metrics = await readMetrics(m.reader, m.exporter);
  await pool.close();
  return { conns, inflight, metrics };
}

test('growth at the stream limit: 4 connections at 16 in flight, 4 streams each; off by default', async (t) => {
  const s = await serveGated();
  t.after(() => s.server.forceShutdown());
  const on = await run16(t, s, { maxConnections: 8, streamsPerConnection: 4 });
  assert.equal(on.conns, 4, `got ${on.conns} connections with growth on, want 4`);
  assert.deepEqual(on.inflight, [4, 4, 4, 4]);
  assert.deepEqual(on.metrics['rpclab.pool.resizes'], { grow: 3 });
  const off = await run16(t, s, {});
  assert.equal(off.conns, 1, `got ${off.conns} connections with growth off, want 1`);
  assert.deepEqual(off.inflight, [16]);
});

test('growth retires idle extra channels', async (t) => {
  const s = await serveGated();
  t.after(() => s.server.forceShutdown());
  const pool = new ChannelPool(s.target, insecure, { size: 1, maxConnections: 4, streamsPerConnection: 1, idleTimeoutMs: 1 });
  t.after(() => pool.close());
  const client = new BenchmarkService('unused', insecure, { channelOverride: pool });
  const calls = Array.from({ length: 3 }, () => unary(client, { response_size: HOLD }));
  await s.heldAtLeast(3);
  assert.equal(pool.channels.length, 3);
  s.open();
  await Promise.all(calls);
  const until = deadline();
  while (pool.channels.length > 1 && Date.now() < until) await unary(client); // past the idle time, a pick retires them
  assert.equal(pool.channels.length, 1, 'the idle grown channels were not retired');
  assert.equal(pool.resizes, 4);
});

test('metrics read back through the in-memory exporter', async (t) => {
  const s = await serveGated();
  t.after(() => s.server.forceShutdown());
  const m = meter();
  t.after(() => m.provider.shutdown());
  const pool = new ChannelPool(s.target, insecure, { size: 2, meterProvider: m.provider });
  await pool.connect(deadline()); // both READY: strict turns, none skipped
  const client = new BenchmarkService('unused', insecure, { channelOverride: pool });
  for (let i = 0; i < 6; i++) await unary(client);
  const got = await readMetrics(m.reader, m.exporter);
  assert.deepEqual(got['rpclab.pool.size'], { all: 2 });
  assert.deepEqual(got['rpclab.pool.picks'], { 0: 3, 1: 3 });
  assert.deepEqual(got['rpclab.pool.inflight'], { 0: 0, 1: 0 });
  await pool.close();
  assert.deepEqual((await readMetrics(m.reader, m.exporter))['rpclab.pool.size'], { all: 0 });
});
