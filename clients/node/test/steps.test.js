// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// The steps file (docs/clients.md, "The step spec") and the human command
// line that builds the same steps. Run by clients/conformance TestNodeUnit.

'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const { UsageError, goDuration, parse } = require('../src/cli');
const { SCHEMA, StepError, connsRequested, loadSteps } = require('../src/steps');

const MAX_PAYLOAD = SCHEMA.properties.payload_bytes.maximum;

const GOOD = {
  target: '127.0.0.1:50051',
  service: 'benchmark',
  rpc: 'unary',
  conn: 'shared',
  inflight: 4,
  payload_bytes: 0,
  warmup_ns: 1000000000,
  interval_ns: 3000000000,
  client_cpus: [0],
  out: '/tmp/r.jsonl',
};

/** GOOD with the given fields replaced (a value of undefined removes one). */
function with_(kw) {
  return JSON.parse(JSON.stringify({ ...GOOD, ...kw }));
}

function write(t, text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rpclab-steps-'));
  t.after(() => fs.rmSync(dir, { recursive: true }));
  const p = path.join(dir, 'steps.jsonl');
  fs.writeFileSync(p, text);
  return p;
}

test('a good steps file gives its steps in order', (t) => {
  const second = with_({ rpc: 'streaming', conn: 'pool:4:round-robin', client_cpus: undefined, out: 'b.jsonl' });
  const third = with_({ conn: 'pool:2:least-loaded' });
  const got = loadSteps(write(t, `${JSON.stringify(GOOD)}\n\n${JSON.stringify(second)}\n${JSON.stringify(third)}\n`));
  const base = { target: '127.0.0.1:50051', service: 'benchmark', inflight: 4, payloadBytes: 0, warmupNs: 1000000000n, intervalNs: 3000000000n };
  const want = [
    { ...base, rpc: 'unary', conn: { kind: 'shared', n: 0, pick: '' }, clientCpus: [0], out: '/tmp/r.jsonl' },
    { ...base, rpc: 'streaming', conn: { kind: 'pool', n: 4, pick: 'round-robin' }, clientCpus: null, out: 'b.jsonl' },
    { ...base, rpc: 'unary', conn: { kind: 'pool', n: 2, pick: 'least-loaded' }, clientCpus: [0], out: '/tmp/r.jsonl' },
  ];
  assert.deepEqual(got, want);
});

test('a bad line names the line and the field', (t) => {
  const cases = [
    ['not JSON', '{', null],
    ['not an object', '[1]', null],
    ['null', 'null', null],
    ['unknown field', with_({ pick: 'least-loaded' }), 'pick'],
    ['missing target', with_({ target: undefined }), 'target'],
    ['missing out', with_({ out: undefined }), 'out'],
    ['duration as string', with_({ warmup_ns: '1s' }), 'warmup_ns'],
    ['duration as float', with_({ interval_ns: 1.5 }), 'interval_ns'],
    ['inflight as bool', with_({ inflight: true }), 'inflight'],
    ['inflight 0', with_({ inflight: 0 }), 'inflight'],
    ['inflight too many', with_({ inflight: 20001 }), 'inflight'],
    ['payload too big', with_({ payload_bytes: MAX_PAYLOAD + 1 }), 'payload_bytes'],
    ['interval 0', with_({ interval_ns: 0 }), 'interval_ns'],
    ['negative warmup', with_({ warmup_ns: -1 }), 'warmup_ns'],
    ['empty target', with_({ target: '' }), 'target'],
    ['target not a string', with_({ target: 5 }), 'target'],
    ['unknown rpc', with_({ rpc: 'bidi' }), 'rpc'],
    ['unknown service', with_({ service: 'echo' }), 'service'],
    ['unsupported service', with_({ service: 'ydb-debug' }), 'service'],
    ['unknown conn', with_({ conn: 'bogus' }), 'conn'],
    ['pool of 0', with_({ conn: 'pool:0' }), 'conn'],
    ['unknown pick', with_({ conn: 'pool:4:fastest' }), 'conn'],
    ['pool too big', with_({ conn: 'pool:20001' }), 'conn'],
    ['bad cpu', with_({ client_cpus: [0, -1] }), 'client_cpus'],
    ['cpus not a list', with_({ client_cpus: 0 }), 'client_cpus'],
  ];
  for (const [name, bad, field] of cases) {
    const line = typeof bad === 'string' ? bad : JSON.stringify(bad);
    const p = write(t, `${JSON.stringify(GOOD)}\n${line}\n`);
    let got;
    try {
      loadSteps(p);
    } catch (e) {
      assert.ok(e instanceof StepError, `${name}: ${e}`);
      got = [e.field, e.message.startsWith(`${p}:2: `)];
    }
    assert.deepEqual(got, [field, true], `${name}: got ${got}, want ${[field, true]}`);
  }
});

test('durations parse as Go time.ParseDuration does', () => {
  const cases = [
    ['0', 0n], ['0s', 0n], ['-0', 0n], ['300ms', 300000000n], ['1m0s', 60000000000n],
    ['1.5s', 1500000000n], ['2h45m', 9900000000000n], ['250us', 250000n], ['250µs', 250000n],
    ['1.000000001s', 1000000001n], ['.5s', 500000000n], ['s', null], ['5', null], ['', null],
    ['-1s', null], ['1x', null], ['1..5s', null], ['3000000h', null],
  ];
  for (const [s, want] of cases) {
    let got = null;
    try {
      got = goDuration('--warmup', s);
    } catch (e) {
      assert.ok(e instanceof UsageError && e.message.startsWith('--warmup: '), `goDuration(${JSON.stringify(s)}): ${e}`);
    }
    assert.equal(got, want, `goDuration(${JSON.stringify(s)})`);
  }
});

test('a bad command line names the flag', () => {
  const cases = [
    [['--target', 'h:1', '--inflight', 'x'], '--inflight'],
    [['--inflight', '1'], '--target'],
    [['--target', 'h:1', '--conn', 'pool:0'], '--conn'],
    [['--target', 'h:1', '--conn', 'shared:2'], '--conn'],
    [['--target', 'h:1', '--conn', 'bogus'], '--conn'],
    [['--target', 'h:1', '--rpc', 'bidi'], '--rpc'],
    [['--target', 'h:1', '--interval', '0s'], '--interval'],
    [['--target', 'h:1', '--warmup', '5'], '--warmup'],
    [['--target', 'h:1', '--dial-timeout', '0'], '--dial-timeout'],
    [['--target', 'h:1', '--bogus', '1'], '--bogus'],
    [['--target', 'h:1', '--inflight', '0'], '--inflight'],
    [['--target', 'h:1', '--inflight', '1', '--min-inflight', '2'], '--inflight'],
    [['--target', 'h:1', '--min-inflight', '4', '--max-inflight', '2'], '--max-inflight'],
    [['--target', 'h:1', '--max-inflight', '999999999'], '--max-inflight'],
    [['--target', 'h:1', '--payload', String(MAX_PAYLOAD + 1)], '--payload'],
    [['--target', 'h:1', '--warmup'], '--warmup'],
    [['--target', 'h:1', 'stray'], 'stray'],
    [['--steps', '/nonexistent/steps.jsonl'], '--steps'],
    [['--steps', '/dev/null', '--target', 'h:1'], '--target'],
  ];
  for (const [args, flag] of cases) {
    assert.throws(() => parse(args), (e) => e instanceof UsageError && e.message.includes(flag), `${args.join(' ')}: want an error naming ${flag}`);
  }
});

test('the flags build steps in the order rpc, conn, inflight', () => {
  const { steps, opts, truncate } = parse([
    '--target', '127.0.0.1:1', '--min-inflight', '2', '--max-inflight', '8', '--step', '3',
    '--conn', 'shared, pool:4', '--rpc=unary,streaming', '--payload', '7', '--warmup', '0',
    '--interval', '2s', '--rpc-timeout', '2s', '-o', 'r.jsonl',
  ]);
  const got = steps.map((s) => [s.rpc, s.conn.kind, s.inflight].join(' '));
  const want = ['unary', 'streaming'].flatMap((r) => ['shared', 'pool'].flatMap((c) => [2, 5, 8].map((n) => `${r} ${c} ${n}`)));
  assert.deepEqual(got, want);
  const { target, payloadBytes, warmupNs, intervalNs, out } = steps[0];
  assert.deepEqual({ target, payloadBytes, warmupNs, intervalNs, out, truncate, rpcTimeoutNs: opts.rpcTimeoutNs }, {
    target: '127.0.0.1:1', payloadBytes: 7, warmupNs: 0n, intervalNs: 2000000000n, out: 'r.jsonl', truncate: 'r.jsonl', rpcTimeoutNs: 2000000000n,
  });
});

test('defaults, and RPCLAB_NODE_JIT_WARMUP', () => {
  const { steps, opts, truncate } = parse(['--target', 'h:1'], { RPCLAB_NODE_JIT_WARMUP: '1s' });
  assert.deepEqual([...new Set(steps.map((s) => s.inflight))], [1, 2, 4, 8, 16, 32]);
  assert.deepEqual([...new Set(steps.map((s) => s.conn.kind))], ['shared', 'per-worker']);
  assert.deepEqual([steps[0].out, steps[0].warmupNs, steps[0].intervalNs, truncate], ['-', 1000000000n, 3000000000n, null]);
  assert.deepEqual(opts, { dialTimeoutNs: 5000000000n, rpcTimeoutNs: 0n, jitWarmupNs: 1000000000n });
});

test('connections requested per layout', () => {
  const cases = [['shared', 1], ['per-worker', 8], ['channel-per-worker', 8], ['local-pool', 8], ['distinct-args', 8], ['pool:3', 3], ['pool:3:least-loaded', 3]];
  for (const [conn, want] of cases) {
    const { steps } = parse(['--target', 'h:1', '--conn', conn, '--inflight', '8']);
    assert.equal(connsRequested(steps[0].conn, 8), want, conn);
  }
});
