// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Run with: node --test clients/node/test/*.test.js  (after clients/node/build.sh)

'use strict';

const assert = require('node:assert/strict');
const test = require('node:test');

const { UsageError, connsRequested, goDuration, parse } = require('../src/flags');

test('durations parse as Go time.ParseDuration does', () => {
  const cases = [
    ['0', 0n],
    ['0s', 0n],
    ['-0', 0n],
    ['300ms', 300000000n],
    ['1m0s', 60000000000n],
    ['1.5s', 1500000000n],
    ['2h45m', 9900000000000n],
    ['250us', 250000n],
    ['250µs', 250000n],
    ['1.000000001s', 1000000001n],
    ['.5s', 500000000n],
    ['s', null],
    ['5', null],
    ['', null],
    ['-1s', null],
    ['1x', null],
    ['1..5s', null],
    ['3000000h', null], // past int64 nanoseconds
  ];
  for (const [s, want] of cases) {
    let got = null;
    try {
      got = goDuration('--warmup', s);
    } catch (e) {
      assert.ok(e instanceof UsageError, `goDuration(${JSON.stringify(s)}): ${e}`);
      assert.equal(e.flag, '--warmup');
    }
    assert.equal(got, want, `goDuration(${JSON.stringify(s)})`);
  }
});

test('bad flags name the flag', () => {
  const cases = [
    [['--target', 'h:1', '--inflight', 'x'], '--inflight'],
    [['--inflight', '1'], '--target'],
    [['--target', 'h:1', '--conn', 'pool:0'], '--conn'],
    [['--target', 'h:1', '--conn', 'shared:2'], '--conn'],
    [['--target', 'h:1', '--conn', 'bogus'], '--conn'],
    [['--target', 'h:1', '--rpc', 'bidi'], '--rpc'],
    [['--target', 'h:1', '--interval', '0s'], '--interval'],
    [['--target', 'h:1', '--dial-timeout', '0s'], '--dial-timeout'],
    [['--target', 'h:1', '--bogus', '1'], '--bogus'],
    [['--target', 'h:1', '--inflight', '0'], '--inflight'],
    [['--target', 'h:1', '--inflight', '1', '--min-inflight', '2'], '--inflight'],
    [['--target', 'h:1', '--min-inflight', '4', '--max-inflight', '2'], '--max-inflight'],
    [['--target', 'h:1', '--payload', '5000000'], '--payload'],
    [['--target', 'h:1', '--warmup'], '--warmup'],
    [['--target', 'h:1', 'stray'], 'stray'],
  ];
  for (const [args, flag] of cases) {
    assert.throws(
      () => parse(args),
      (e) => e instanceof UsageError && e.flag === flag,
      `${args.join(' ')}: want an error naming ${flag}`,
    );
  }
});

test('sweep flags', () => {
  const f = parse([
    '--target', '127.0.0.1:1', '--min-inflight', '2', '--max-inflight', '8', '--step', '3',
    '--conn', 'shared,pool:4,channel-per-worker,local-pool,distinct-args,per-worker',
    '--rpc=unary,streaming', '--payload', '100', '--warmup', '500ms', '--interval=2s', '--rpc-timeout', '1s', '-o', 'x.jsonl',
  ]);
  assert.deepEqual(f.inflight, [2, 5, 8]);
  assert.deepEqual(f.conns.map((c) => c.kind), ['shared', 'pool', 'channel-per-worker', 'local-pool', 'distinct-args', 'per-worker']);
  assert.deepEqual(f.conns.map((c) => connsRequested(c, 5)), [1, 4, 5, 5, 5, 5]);
  assert.deepEqual(f.rpcs, ['unary', 'streaming']);
  assert.equal(f.payload, 100);
  assert.equal(f.warmupNs, 500000000n);
  assert.equal(f.intervalNs, 2000000000n);
  assert.equal(f.rpcTimeoutNs, 1000000000n);
  assert.equal(f.dialTimeoutNs, 5000000000n);
  assert.equal(f.out, 'x.jsonl');
});

test('defaults', () => {
  const f = parse(['--target', 'h:1']);
  assert.deepEqual(f.inflight, [1, 2, 4, 8, 16, 32]);
  assert.deepEqual(f.conns.map((c) => c.kind), ['shared', 'per-worker']);
  assert.deepEqual(f.rpcs, ['unary']);
});

test('--jit-warmup defaults to 4s, or RPCLAB_NODE_JIT_WARMUP; the flag wins', () => {
  assert.equal(parse(['--target', 'h:1']).jitWarmupNs, 4000000000n);
  assert.equal(parse(['--target', 'h:1'], { RPCLAB_NODE_JIT_WARMUP: '0s' }).jitWarmupNs, 0n);
  assert.equal(parse(['--target', 'h:1', '--jit-warmup', '1s'], { RPCLAB_NODE_JIT_WARMUP: '0s' }).jitWarmupNs, 1000000000n);
  assert.throws(() => parse(['--target', 'h:1'], { RPCLAB_NODE_JIT_WARMUP: 'x' }), (e) => e.flag === 'RPCLAB_NODE_JIT_WARMUP');
});
