// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// ChannelPool against a real grpc-js server on loopback, with a client made
// by loadPackageDefinition from ../../proto. Run in clients/node/pool with
// `node --test test/*.test.js` (clients/conformance's TestNodePoolUnit).

'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { test } = require('node:test');

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const { ChannelPool, Policy, pick, aggregate, defaultSize } = require('..');

const ConnectivityState = grpc.connectivityState;
const insecure = grpc.credentials.createInsecure();

// Bounds every wait in these tests; none is a sleep.
const TIMEOUT_MS = 20000;
const deadline = () => Date.now() + TIMEOUT_MS;

const PROTO_DIR = path.resolve(__dirname, '..', '..', '..', '..', 'proto');
const def = protoLoader.loadSync('grpc/testing/benchmark_service.proto', { includeDirs: [PROTO_DIR], keepCase: true });
const { BenchmarkService } = grpc.loadPackageDefinition(def).grpc.testing;

/** A BenchmarkService that counts unary calls and records each call's peer. */
class Servicer {
  constructor() {
    this.unary = 0;
    this.peers = []; // of UnaryCall, in arrival order
    this.streamPeers = []; // of StreamingCall
    this.waiters = [];
  }

  /** Resolves once at least n unary calls arrived; rejects after TIMEOUT_MS. */
  unaryAtLeast(n) {
    return within(
      new Promise((resolve) => {
        this.waiters.push({ n, resolve });
        this.wake();
      }),
      `${n} unary calls (got ${this.unary})`,
    );
  }

  wake() {
    this.waiters = this.waiters.filter((w) => (this.unary >= w.n ? (w.resolve(), false) : true));
  }

  handlers() {
    return {
      UnaryCall: (call, callback) => {
        this.unary++;
        this.peers.push(call.getPeer());
        this.wake();
        callback(null, {});
      },
      StreamingCall: (call) => {
        this.streamPeers.push(call.getPeer());
        call.on('data', () => call.write({}));
        call.on('end', () => call.end());
      },
    };
  }
}

/** Rejects if promise has not settled within TIMEOUT_MS. */
function within(promise, what) {
  let timer;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

/** Starts a server on 127.0.0.1:port (0: any); resolves to { server, port, servicer }. */
function serve(port = 0) {
  const servicer = new Servicer();
  const server = new grpc.Server();
  server.addService(BenchmarkService.service, servicer.handlers());
  return new Promise((resolve, reject) => {
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, got) =>
      err ? reject(err) : resolve({ server, port: got, servicer }),
    );
  });
}

/**
 * This process's ESTABLISHED TCP connections to port, as the kernel has them:
 * the socket inodes of /proc/self/fd matched against /proc/net/tcp{,6}. The
 * in-process server's sockets have port as their local port: not counted.
 */
function connectionsTo(port) {
  const inodes = new Set();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let link;
    try {
      link = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m) inodes.add(m[1]);
  }
  let n = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines;
    try {
      lines = fs.readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const remotePort = parseInt(f[2].split(':')[1], 16);
      if (f[3] === '01' && remotePort === port && inodes.has(f[9])) n++;
    }
  }
  return n;
}

function unary(client, opts = {}) {
  return new Promise((resolve, reject) =>
    client.UnaryCall({}, { deadline: deadline(), ...opts }, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

test('pick', () => {
  const { READY: R, IDLE: I, CONNECTING: C, TRANSIENT_FAILURE: T, SHUTDOWN: S } = ConnectivityState;
  const rr = Policy.ROUND_ROBIN;
  const ll = Policy.LEAST_LOADED;
  const cases = [
    ['round robin takes start', rr, [R, R, R], [5, 0, 0], 0, 0],
    ['round robin wraps', rr, [R, R, R], [0, 0, 0], 5, 2],
    ['round robin skips TRANSIENT_FAILURE while one is READY', rr, [T, R], [0, 0], 0, 1],
    ['round robin skips CONNECTING while one is IDLE', rr, [C, I], [0, 0], 0, 1],
    ['round robin skips SHUTDOWN', rr, [S, T, R], [0, 0, 0], 0, 2],
    ['none usable: round robin as if healthy', rr, [T, C, T], [0, 0, 0], 1, 1],
    ['least loaded takes the idle one', ll, [R, R], [3, 0], 0, 1],
    ['least loaded skips a failed idle one', ll, [T, R], [0, 9], 0, 1],
    ['least loaded, none usable', ll, [T, T], [2, 1], 0, 1],
  ];
  for (const [name, policy, states, inflight, start, want] of cases) {
    const got = pick(policy, states, inflight, start);
    assert.equal(got, want, `${name}: got ${got}, want ${want}`);
  }
  // Power of two choices: the lesser loaded of two different channels drawn
  // at random, so never the busiest, never a failed one while one is READY,
  // and the least loaded most often.
  let seed = 1;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const got = Array.from({ length: 1000 }, (_, i) => pick(ll, [R, R, R, R, T], [4, 2, 1, 3, 0], i, random));
  assert.deepEqual([...new Set(got)].sort(), [1, 2, 3], 'want channels 1..3 taken, never the busiest (0) or the failed one (4)');
  const count = (k) => got.filter((g) => g === k).length;
  assert.ok(count(2) > count(1), `the least loaded won ${count(2)} draws, the next ${count(1)}`);
});

test('aggregate', () => {
  const { READY: R, IDLE: I, CONNECTING: C, TRANSIENT_FAILURE: T, SHUTDOWN: S } = ConnectivityState;
  const cases = [
    ['one READY is READY', [T, R, C], R],
    ['CONNECTING before IDLE', [I, C, T], C],
    ['IDLE before TRANSIENT_FAILURE', [T, I], I],
    ['all failed', [T, T], T],
    ['one shut down is not SHUTDOWN', [S, T], T],
    ['all shut down', [S, S], S],
  ];
  for (const [name, states, want] of cases) {
    const got = aggregate(states);
    assert.equal(got, want, `${name}: got ${ConnectivityState[got]}, want ${ConnectivityState[want]}`);
  }
});

test('bad input', () => {
  const cases = [
    ['size 0', { size: 0 }, RangeError, '0'],
    ['negative size', { size: -3 }, RangeError, '-3'],
    ['size not a number', { size: '4' }, TypeError, '"4"'],
    ['fractional size', { size: 2.5 }, TypeError, '2.5'],
    ['size above the maximum', { size: 1025 }, RangeError, '1024'],
    ['a huge size, refused before any channel', { size: 1e9 }, RangeError, '1000000000'],
    ['maxConnections below size', { size: 4, maxConnections: 2, streamsPerConnection: 4 }, RangeError, '2'],
    ['growth with no stream limit', { size: 1, maxConnections: 4 }, TypeError, 'streamsPerConnection'],
    ['maxConnections above the maximum', { size: 1, maxConnections: 2000, streamsPerConnection: 4 }, RangeError, '2000'],
    ['redialAfterMs 0', { size: 1, redialAfterMs: 0 }, RangeError, 'redialAfterMs'],
    ['unknown policy', { size: 2, policy: 'fastest' }, TypeError, '"fastest"'],
    ['policy with the wrong spelling', { size: 2, policy: 'least_loaded' }, TypeError, '"least_loaded"'],
  ];
  for (const [name, options, ErrorType, named] of cases) {
    assert.throws(
      () => new ChannelPool('127.0.0.1:1', insecure, options),
      (err) => {
        assert.ok(err instanceof ErrorType, `${name}: got ${err.name}, want ${ErrorType.name}`);
        assert.ok(err.message.includes(named), `${name}: got ${JSON.stringify(err.message)}, want it to name ${named}`);
        return true;
      },
    );
  }
  const targets = [
    ['empty target', '', "''"],
    ['target with a space', '127.0.0.1 :1', 'whitespace'],
    ['port out of range', '127.0.0.1:99999', '99999'],
    ['port 0', '127.0.0.1:0', '"0"'],
    ['dns: with no host', 'dns:///', 'empty host'],
  ];
  for (const [name, target, named] of targets) {
    assert.throws(() => new ChannelPool(target, insecure, { size: 1 }), (err) => {
      assert.ok(err instanceof TypeError && err.code === 'ERR_INVALID_ARG_VALUE', `${name}: got ${err}`);
      assert.ok(named === "''" || err.message.includes(named), `${name}: got ${JSON.stringify(err.message)}, want it to name ${named}`);
      return true;
    });
  }
  // No default credentials: plaintext is asked for by name.
  assert.throws(() => new ChannelPool('127.0.0.1:1'), (err) => err instanceof TypeError && /createInsecure/.test(err.message));
  // No size: the CPUs, clamped to 2..8.
  const p = new ChannelPool('127.0.0.1:1', insecure);
  assert.equal(p.channels.length, defaultSize());
  assert.ok(defaultSize() >= 2 && defaultSize() <= 8);
  p.close();
});

test('a target that never answers', async (t) => {
  // Accepts TCP and never speaks HTTP/2: construction does not wait for it;
  // calls, connect() and waitForReady end at their deadlines.
  const sockets = [];
  const silent = net.createServer((s) => sockets.push(s));
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const target = `127.0.0.1:${silent.address().port}`;
  const pool = new ChannelPool(target, insecure, { size: 2 });
  t.after(() => pool.close());
  const client = new BenchmarkService(target, insecure, { channelOverride: pool });
  const err = await unary(client, { deadline: Date.now() + 200 }).then(
    () => assert.fail('a call to a silent server succeeded'),
    (e) => e,
  );
  const codes = [grpc.status.DEADLINE_EXCEEDED, grpc.status.UNAVAILABLE];
  assert.ok(codes.includes(err.code), `got code ${err.code}, want one of ${codes}`);
  await assert.rejects(pool.connect(Date.now() + 200), /not all READY/);
  const waitErr = await new Promise((resolve) => client.waitForReady(Date.now() + 200, resolve));
  assert.ok(waitErr instanceof Error, `got ${waitErr}, want waitForReady to fail at its deadline`);
});

test('pool:N gives N connections as the kernel sees them', async (t) => {
  // The last case is the trap the pool avoids: plain channels with identical
  // options share grpc-js's global subchannel, so one connection.
  const cases = [
    ['pool of 1', 1, true, 1],
    ['pool of 4', 4, true, 4],
    ['4 plain clients', 4, false, 1],
  ];
  for (const [name, size, pooled, want] of cases) {
    await t.test(name, async () => {
      const { server, port } = await serve();
      const target = `127.0.0.1:${port}`;
      let close;
      if (pooled) {
        const pool = new ChannelPool(target, insecure, { size });
        close = () => pool.close();
        await pool.connect(deadline());
      } else {
        const clients = Array.from({ length: size }, () => new BenchmarkService(target, insecure));
        close = () => clients.forEach((c) => c.close());
        await Promise.all(clients.map((c) => new Promise((resolve, reject) => c.waitForReady(deadline(), (e) => (e ? reject(e) : resolve())))));
      }
      const got = connectionsTo(port);
      close();
      server.forceShutdown();
      assert.equal(got, want, `got ${got} connections, want ${want}`);
    });
  }
});

test('a loadPackageDefinition client works through the pool', async (t) => {
  const { server, port, servicer } = await serve();
  t.after(() => server.forceShutdown());
  const target = `127.0.0.1:${port}`;
  const pool = new ChannelPool(target, insecure, { size: 3 });
  const client = new BenchmarkService(target, insecure, { channelOverride: pool });
  await new Promise((resolve, reject) => client.waitForReady(deadline(), (e) => (e ? reject(e) : resolve())));
  assert.equal(client.getChannel(), pool);
  for (let i = 0; i < 6; i++) await unary(client);
  assert.equal(servicer.unary, 6, `got ${servicer.unary} calls on the server, want 6`);
  const stream = client.StreamingCall({ deadline: deadline() });
  const got = await new Promise((resolve, reject) => {
    let n = 0;
    stream.on('data', () => n++);
    stream.on('error', reject);
    stream.on('end', () => resolve(n));
    for (let i = 0; i < 3; i++) stream.write({});
    stream.end();
  });
  assert.equal(got, 3, `got ${got} responses, want 3`);
  // Not implemented by the servicer: the status comes through unchanged.
  const err = await new Promise((resolve) => {
    const s = client.StreamingFromServer({}, { deadline: deadline() });
    s.on('data', () => {});
    s.on('error', resolve);
  });
  assert.equal(err.code, grpc.status.UNIMPLEMENTED, `got code ${err.code}, want UNIMPLEMENTED`);
  const cerr = await new Promise((resolve) => client.StreamingFromClient({ deadline: deadline() }, resolve).end());
  assert.equal(cerr.code, grpc.status.UNIMPLEMENTED, `got code ${cerr.code}, want UNIMPLEMENTED`);
  assert.deepEqual(pool.inflight(), [0, 0, 0], `got ${pool.inflight()} in flight after every call ended, want none`);
  client.close();
  assert.deepEqual(pool.states(), [ConnectivityState.SHUTDOWN, ConnectivityState.SHUTDOWN, ConnectivityState.SHUTDOWN]);
  const closedErr = await new Promise((resolve) => client.waitForReady(deadline(), resolve));
  assert.match(String(closedErr), /closed/, `got ${closedErr}, want waitForReady on a closed pool to fail at once`);
  assert.deepEqual(pool.states(), [ConnectivityState.SHUTDOWN, ConnectivityState.SHUTDOWN, ConnectivityState.SHUTDOWN], 'waitForReady revived a closed pool');
  assert.throws(() => client.UnaryCall({}, () => {}), /shut down/);
});

test('round robin spreads calls over every connection', async (t) => {
  const { server, port, servicer } = await serve();
  t.after(() => server.forceShutdown());
  const pool = new ChannelPool(`127.0.0.1:${port}`, insecure, { size: 4 });
  t.after(() => pool.close());
  await pool.connect(deadline());
  const client = new BenchmarkService('unused', insecure, { channelOverride: pool });
  for (let i = 0; i < 8; i++) await unary(client);
  const got = new Set(servicer.peers).size;
  assert.equal(got, 4, `8 calls came from ${got} connections, want 4`);
});

test('least-loaded prefers the idle channel', async (t) => {
  // A stream keeps one channel busy; every unary call meanwhile goes to the
  // other one (round robin sends half of them to the busy one).
  for (const [policy, wantOnBusy] of [
    [Policy.LEAST_LOADED, 0],
    [Policy.ROUND_ROBIN, 3],
  ]) {
    await t.test(policy, async () => {
      const { server, port, servicer } = await serve();
      const pool = new ChannelPool(`127.0.0.1:${port}`, insecure, { size: 2, policy });
      try {
        await pool.connect(deadline());
        const client = new BenchmarkService('unused', insecure, { channelOverride: pool });
        const stream = client.StreamingCall({ deadline: deadline() });
        await new Promise((resolve, reject) => {
          stream.once('data', resolve); // the server has recorded the stream's peer
          stream.on('error', reject);
          stream.write({});
        });
        const busy = servicer.streamPeers[0];
        for (let i = 0; i < 6; i++) await unary(client);
        const ended = new Promise((resolve) => stream.on('end', resolve));
        stream.end();
        stream.resume();
        await ended;
        const got = servicer.peers.filter((p) => p === busy).length;
        assert.equal(got, wantOnBusy, `got ${got} of 6 calls on the busy connection, want ${wantOnBusy}`);
      } finally {
        pool.close();
        server.forceShutdown();
      }
    });
  }
});

test('a server restart on the same port recovers without the caller doing anything', async (t) => {
  const first = await serve();
  const pool = new ChannelPool(`127.0.0.1:${first.port}`, insecure, { size: 3, policy: Policy.LEAST_LOADED });
  const client = new BenchmarkService('unused', insecure, { channelOverride: pool });
  let stopped = false;
  const failed = [];
  const caller = async () => {
    while (!stopped) {
      try {
        await unary(client);
      } catch (err) {
        failed.push(err.code);
        await new Promise(setImmediate); // fails fast while no server listens: let I/O run
      }
    }
  };
  const callers = [caller(), caller()];
  let second;
  try {
    await first.servicer.unaryAtLeast(20);
    first.server.forceShutdown();
    second = await serve(first.port);
    assert.equal(second.port, first.port);
    await second.servicer.unaryAtLeast(50);
  } finally {
    stopped = true;
    await Promise.all(callers);
  }
  t.after(() => {
    pool.close();
    second.server.forceShutdown();
  });
  // forceShutdown cancels the calls it runs (CANCELLED, or UNAVAILABLE as the
  // connection drops); while no server listens, calls fail fast (UNAVAILABLE).
  const allowed = [grpc.status.UNAVAILABLE, grpc.status.CANCELLED];
  const bad = [...new Set(failed.filter((c) => !allowed.includes(c)))];
  assert.deepEqual(bad, [], `got failures with codes ${bad}, want ${allowed} only`);
  await pool.connect(deadline());
  const got = connectionsTo(first.port);
  assert.equal(got, 3, `got ${got} connections after the restart, want 3`);
});
