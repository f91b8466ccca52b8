// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// The command line (--steps FILE) and the steps file (docs/clients.md, "The
// step spec"). Run by clients/conformance TestNodeUnit.

'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const { SCHEMA, StepError, USAGE, UsageError, channelzPort, connsRequested, loadSteps, parse } = require('../src/steps');

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

test('a bad command line names what is wrong', (t) => {
  const bad = write(t, `${JSON.stringify(GOOD)}\n${JSON.stringify(with_({ inflight: 'x' }))}\n`);
  const cases = [
    [[], '--steps FILE: required'],
    [['--steps', '/dev/null', '--bogus', '1'], '--bogus'],
    [['--steps'], '--steps'],
    [['--steps', '/dev/null', 'stray'], 'stray'],
    [['--steps', '/dev/null', '--target', 'h:1'], '--target'],
    [['--steps', '/nonexistent/steps.jsonl'], '/nonexistent/steps.jsonl: cannot read'],
    [['--steps', bad], `${bad}:2: inflight: `],
  ];
  for (const [args, want] of cases) {
    assert.throws(() => parse(args), (e) => e instanceof UsageError && e.message.includes(want), `${args.join(' ')}: want an error naming ${want}`);
  }
});

test('a good command line gives the steps file\'s steps; --help gives null', (t) => {
  const p = write(t, `${JSON.stringify(GOOD)}\n`);
  assert.deepEqual(parse(['--steps', p]), loadSteps(p));
  assert.equal(parse(['--help']), null);
  for (const want of ['rpclab sweep --client node', 'schema/step.schema.json', '2 bad input']) assert.ok(USAGE.includes(want), want);
});

test('--channelz-port: off by default, a TCP port, anything else a usage error', (t) => {
  const p = write(t, `${JSON.stringify(GOOD)}\n`);
  assert.equal(channelzPort(['--steps', p]), 0);
  assert.equal(channelzPort(['--steps', p, '--channelz-port', '9000']), 9000);
  assert.deepEqual(parse(['--steps', p, '--channelz-port', '9000']), loadSteps(p));
  for (const bad of ['0', '65536', 'x', '1.5']) {
    assert.throws(() => channelzPort(['--channelz-port', bad]), (e) => e instanceof UsageError && e.message.includes('--channelz-port'), bad);
  }
});

test('connections requested per layout', (t) => {
  const cases = [['shared', 1], ['per-worker', 8], ['channel-per-worker', 8], ['local-pool', 8], ['distinct-args', 8], ['pool:3', 3], ['pool:3:least-loaded', 3]];
  for (const [conn, want] of cases) {
    const [step] = loadSteps(write(t, `${JSON.stringify(with_({ conn, inflight: 8 }))}\n`));
    assert.equal(connsRequested(step.conn, 8), want, conn);
  }
});
