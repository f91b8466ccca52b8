// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Run with: node --test clients/node/test/*.test.js  (after clients/node/build.sh)

'use strict';

const assert = require('node:assert/strict');
const test = require('node:test');
const zlib = require('node:zlib');

const { CODE_NAMES, Record, cpuList, encode, newHistogram, rfc3339, summary } = require('../src/record');

// Encodings written by hdrhistogram-go 1.4.0 (Histogram.Encode with
// V2CompressedEncodingCookieBase) for New(1, 100_000_000_000, 3) holding the
// values below: the reference the Node encoding must match.
const GO_EMPTY = 'HISTFAAAACR42pJpmSzMwMDAyAABzFAaxBf3KHvBYP8BKgIIAAD//1EfBDg=';
const GO_VALUES = 'HISTFAAAAEF42pJpmSzMwMAgxQABzFCakYGBQdyj7AWD/QeoCNNJfiYmpou+TJVM19kbTqxfoHo4gun+D0YWQAAAAP//KDMNXw==';
const VALUES = [1, 999, 1000, 1001, 30000, 31000, 2000000, 99999999999, 100000000000];
// A count past 2^32 in one bucket: counts are 64-bit.
const BIG = { value: 45000, count: 5000000000 };

/** The uncompressed V2 form inside a compressed base64 encoding. */
function uncompressed(b64) {
  const b = Buffer.from(b64, 'base64');
  assert.equal(b.readInt32BE(0), 0x1c849314, 'compressed V2 cookie');
  return zlib.inflateSync(b.subarray(8, 8 + b.readInt32BE(4)));
}

test('encode matches hdrhistogram-go byte for byte (uncompressed)', () => {
  const h = newHistogram();
  for (const v of VALUES) h.recordValue(v);
  h.recordValueWithCount(BIG.value, BIG.count);
  const got = encode(h);
  assert.match(got, /^HISTFAAA[A-Za-z0-9+/=]*$/);
  assert.deepEqual(uncompressed(got), uncompressed(GO_VALUES));
});

test('an empty histogram encodes as Go encodes it', () => {
  assert.deepEqual(uncompressed(encode(newHistogram())), uncompressed(GO_EMPTY));
});

test('summary gives the figures hdrhistogram-go decodes from the same values', () => {
  const h = newHistogram();
  for (const v of VALUES) h.recordValue(v);
  h.recordValueWithCount(BIG.value, BIG.count);
  // From hdrhistogram-go: Min, ValueAtQuantile(50, 90, 99, 99.9), Max of GO_VALUES decoded.
  const s = summary(h);
  assert.equal(h.totalCount, 5000000009);
  assert.equal(s.min_ns, 1);
  assert.equal(s.p50_ns, 45023);
  assert.equal(s.p999_ns, 45023);
  assert.equal(s.p100_ns, 100059316223);
  assert.ok(Math.abs(s.mean_ns - 45048.01063650899) < 1e-6, `mean ${s.mean_ns}`);
});

test('merging worker histograms keeps every count', () => {
  const a = newHistogram();
  const b = newHistogram();
  a.recordValue(1000);
  b.recordValue(2000);
  b.recordValue(3000);
  const m = newHistogram();
  m.add(a);
  m.add(b);
  assert.equal(m.totalCount, 3);
  assert.equal(summary(m).p100_ns, m.highestEquivalentValue(3000));
});

test('cpuList expands kernel CPU lists', () => {
  assert.deepEqual(cpuList('0-2,5'), [0, 1, 2, 5]);
  assert.deepEqual(cpuList('1'), [1]);
  assert.deepEqual(cpuList(''), []);
  assert.deepEqual(cpuList('x'), []);
});

test('rfc3339 writes UTC with microseconds', () => {
  const cases = [
    [0, '1970-01-01T00:00:00.000000Z'],
    [951782400000000 + 123456, '2000-02-29T00:00:00.123456Z'],
    [1795388462000001, '2026-11-22T23:01:02.000001Z'],
  ];
  for (const [us, want] of cases) assert.equal(rfc3339(us), want, `rfc3339(${us})`);
});

test('a record counts errors by code name and fails when no RPC succeeded', () => {
  const step = {
    target: '127.0.0.1:1', rpc: 'unary', conn: { kind: 'pool', n: 2, pick: 'least-loaded' }, inflight: 4, payloadBytes: 7,
    warmupNs: 0n, intervalNs: 1000000000n, clientCpus: [3, 1], out: '-',
  };
  const env = { language: 'node', client_cpus: [0] };
  const byCode = new Array(CODE_NAMES.length).fill(0);
  byCode[14] = 3;
  byCode[4] = 1;
  const r = new Record(step);
  r.fill(newHistogram(), byCode, 1000000000, 5000);
  const got = JSON.parse(r.json(env));
  assert.equal(got.status, 'failed');
  assert.equal(got.error, 'every RPC failed (4)');
  assert.deepEqual(got.errors, { DeadlineExceeded: 1, Unavailable: 3 });
  assert.equal(got.requests, 4);
  assert.equal(got.spec.conn_mode, 'pool');
  assert.equal(got.spec.conns_requested, 2);
  assert.equal(got.spec.pick, 'least-loaded');
  assert.equal(got.client_cpu_ns_per_rpc, 1250);
  assert.equal(got.spec.payload_bytes, 7);
  assert.deepEqual(got.env.client_cpus, [3, 1], 'the step\'s pin replaces the affinity seen');
});
