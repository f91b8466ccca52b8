// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab's Node client (docs/clients.md): a closed-loop sweep on grpc-js
// against a grpc.testing.BenchmarkService server, one JSON Lines record per
// step, appended to the step's out (the steps of --steps FILE, which `rpclab
// sweep --client node` writes). Exit codes: 0 every step ok, 1 a step failed,
// 2 bad flags or steps file.
// SIGINT/SIGTERM end the running step at once; its record ("interrupted")
// and every earlier one are kept.
//
// Every worker lives on the one event loop: a worker sends, its reply's
// callback records the latency and sends again, so each keeps exactly one
// RPC in flight. Nothing is allocated per RPC by this file beyond what
// grpc-js itself needs (and one BigInt per timestamp).

'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { setTimeout: delay } = require('node:timers/promises');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const { ChannelPool, LOCAL_SUBCHANNEL_POOL } = require('../pool');
const { CODES, HIGHEST, Record, detectEnv, newHistogram, nowUs } = require('./record');
const { establishedTo } = require('./sockets');
const { USAGE, UsageError, channelzPort, parse } = require('./steps');

const PROTO_DIR = path.resolve(__dirname, '..', '..', '..', 'proto');

const WARMUP = 0;
const MEASURE = 1;
const DONE = 2;
const DIAL_TIMEOUT_NS = 5000000000n; // how long a step waits for its channels to be READY
const JIT_WARMUP_NS = 4000000000n; // see jitWarmup

function log(msg) {
  process.stderr.write(`rpclab-client (node): ${msg}\n`);
}

/** The BenchmarkService client constructor, generated from ../../proto at run time. */
function loadService() {
  const def = protoLoader.loadSync('grpc/testing/benchmark_service.proto', {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: Number,
    enums: Number,
    defaults: false,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(def).grpc.testing.BenchmarkService;
}

/** Aborted by SIGINT/SIGTERM: the running step ends at once. */
const stop = new AbortController();

/** Sleeps for ns: true, or false as soon as a stop comes. setTimeout takes at most 2^31-1 ms: longer waits are chained. */
async function sleep(ns) {
  const end = process.hrtime.bigint() + ns;
  for (;;) {
    const leftMs = Number((end - process.hrtime.bigint()) / 1000000n);
    if (stop.signal.aborted) return false;
    if (leftMs <= 0) return true;
    try {
      await delay(Math.min(leftMs, 2147483647), null, { signal: stop.signal });
    } catch {
      return false; // aborted
    }
  }
}

/**
 * grpc-js's process-wide subchannel pool (an internal module of the pinned
 * version; null if a later version moves it). It holds a ref on every
 * subchannel it made and drops the unused ones only every 10 s, so the
 * connections of closed channels outlive them by up to 10 s: step after step
 * they would pile up in the OS's count. endStep drops them at once.
 */
const globalPool = (() => {
  try {
    return require('@grpc/grpc-js/build/src/subchannel-pool').getSubchannelPool(true);
  } catch {
    return null;
  }
})();

let stepSeq = 0;

/**
 * The grpc-js clients (channels) of a layout for n workers: one that every
 * worker shares (shared; pool:N, a client on a ChannelPool of ../pool that
 * picks a channel per call), or one per worker. grpc-js, like gRPC C-core,
 * keeps a global subchannel pool: channels to the same target with equal
 * options and credentials share one subchannel, so one connection. Returns
 * {clients, pools}: the pools, to wait until each of their channels is READY.
 *
 * Every channel of a step carries the option rpclab.step, unique per step
 * and equal within it: the step's channels compare as they would in an
 * application (channel-per-worker's identical options still share one
 * connection), but never pick up an earlier step's subchannel, so every step
 * dials fresh connections (docs/clients.md).
 */
function makeClients(Service, target, conn, n) {
  const creds = grpc.credentials.createInsecure();
  const step = ++stepSeq;
  const same = { 'rpclab.step': step };
  if (conn.kind === 'shared') return { clients: [new Service(target, creds, same)], pools: [] };
  if (conn.kind === 'pool') {
    // Its channels have subchannel pools of their own: N connections.
    const pool = new ChannelPool(target, creds, { size: conn.n, policy: conn.pick });
    return { clients: [new Service(target, creds, { channelOverride: pool })], pools: [pool] };
  }
  const clients = [];
  for (let i = 0; i < n; i++) {
    let opts;
    if (conn.kind === 'channel-per-worker') {
      opts = same; // identical options: the global pool hands every channel the same subchannel
    } else if (conn.kind === 'distinct-args') {
      opts = { 'rpclab.step': step, 'rpclab.worker': i }; // a unique option: a subchannel of its own
    } else {
      opts = { ...same, [LOCAL_SUBCHANNEL_POOL]: 1 }; // per-worker and local-pool
    }
    clients.push(new Service(target, creds, opts));
  }
  return { clients, pools: [] };
}

/**
 * Closes a step's channels, drops their connections from the global pool,
 * and waits (2 s at most, less on a stop) until the OS shows none of them
 * established, so the next step starts on fresh connections only.
 */
async function endStep(clients, target) {
  for (const c of clients) c.close();
  if (globalPool) globalPool.unrefUnusedSubchannels();
  const until = Date.now() + 2000;
  let open = establishedTo(target);
  while (!stop.signal.aborted && open > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    open = establishedTo(target);
  }
  if (open > 0 && !stop.signal.aborted) log(`${open} connection(s) of the step still established 2 s after closing; the next step may see them`);
}

/** Waits until every client, and every channel of a pool, is READY; null, or why not. */
async function connectAll(clients, pools) {
  const deadline = Date.now() + Number(DIAL_TIMEOUT_NS / 1000000n);
  let onStop;
  const stopped = new Promise((resolve) => {
    onStop = resolve;
    stop.signal.addEventListener('abort', onStop);
  });
  const ready = Promise.all([
    ...clients.map((c) => new Promise((resolve, reject) => c.waitForReady(deadline, (err) => (err ? reject(err) : resolve())))),
    ...pools.map((p) => p.connect(deadline)),
  ]).then(
    () => null,
    (err) => err.message,
  );
  const why = await Promise.race([ready, stopped]);
  stop.signal.removeEventListener('abort', onStop);
  return stop.signal.aborted ? 'stopped' : why;
}

/** One closed-loop worker: one RPC in flight at a time, its own histogram. */
class Worker {
  constructor(state, client, req) {
    this.state = state;
    this.client = client;
    this.req = req;
    this.hist = newHistogram();
    this.byCode = new Array(CODES).fill(0);
    this.began = WARMUP;
    this.t0 = 0n;
    this.call = null;
    this.finished = null;
    this.finish = null;
  }

  /** Records an RPC that began and ended inside the measured interval. */
  done(t1, code) {
    if (this.began !== MEASURE || this.state.phase !== MEASURE) return;
    this.byCode[code < CODES ? code : 2]++; // an unknown code counts as Unknown
    if (code === 0) {
      let v = Number(t1 - this.t0);
      if (v < 1) v = 1;
      else if (v > HIGHEST) v = HIGHEST;
      this.hist.recordValue(v);
    }
  }

  /** Starts the loop; the promise resolves once the worker has stopped. */
  start(streaming) {
    this.finished = new Promise((resolve) => {
      this.finish = resolve;
    });
    if (streaming) this.openStream();
    else {
      this.onReply = this.onReply.bind(this);
      this.sendUnary();
    }
    return this.finished;
  }

  /** Ends the loop: cancels the RPC or stream in flight. */
  cancel() {
    const call = this.call;
    this.call = null;
    if (call) call.cancel();
    this.finish();
  }

  sendUnary() {
    if (this.state.phase === DONE) return this.finish();
    this.began = this.state.phase;
    this.t0 = process.hrtime.bigint();
    this.call = this.client.UnaryCall(this.req, this.onReply);
  }

  onReply(err) {
    const t1 = process.hrtime.bigint();
    if (this.call === null) return; // cancelled at the end of the step
    this.call = null;
    this.done(t1, err ? err.code : 0);
    this.sendUnary();
  }

  /**
   * Bidi ping-pong on StreamingCall: a request, then the next only once its
   * reply arrived. A stream that fails is counted by its status and reopened.
   */
  openStream() {
    if (this.state.phase === DONE) return this.finish();
    const s = this.client.StreamingCall();
    this.call = s;
    this.waiting = false;
    s.on('data', () => {
      const t1 = process.hrtime.bigint();
      if (this.call !== s) return;
      this.waiting = false;
      this.done(t1, 0);
      if (this.state.phase === DONE) {
        this.call = null;
        s.cancel();
        return this.finish();
      }
      this.sendPing(s);
    });
    const broken = (code) => {
      const t1 = process.hrtime.bigint();
      if (this.call !== s) return; // already cancelled or replaced
      this.call = null;
      if (this.waiting) this.done(t1, code);
      this.waiting = false;
      s.cancel();
      setImmediate(() => this.openStream());
    };
    s.on('error', (err) => broken(err.code ?? 2));
    s.on('end', () => broken(14)); // the server ended the stream: Unavailable
    this.sendPing(s);
  }

  sendPing(s) {
    this.began = this.state.phase;
    this.waiting = true;
    this.t0 = process.hrtime.bigint();
    s.write(this.req);
  }
}

/** Runs one step on fresh channels; null if a stop came before its interval. */
async function runStep(Service, step) {
  const { target, rpc, conn, inflight } = step;
  const rec = new Record(step);
  const { clients, pools } = makeClients(Service, target, conn, inflight);
  const closeAll = () => endStep(clients, target);
  const why = await connectAll(clients, pools);
  if (why !== null) {
    await closeAll();
    if (stop.signal.aborted) return null;
    rec.unreachable = true;
    rec.fail(`target unreachable: no connection to ${target} within ${Number(DIAL_TIMEOUT_NS) / 1e9}s: ${why}`);
    return rec;
  }

  const state = { phase: WARMUP }; // what every worker of the step shares
  const req = {
    response_size: step.payloadBytes,
    payload: { type: 0, body: Buffer.alloc(step.payloadBytes) },
  };
  const workers = [];
  for (let i = 0; i < inflight; i++) workers.push(new Worker(state, clients[i % clients.length], req));
  const running = workers.map((w) => w.start(rpc === 'streaming'));

  const warmed = await sleep(step.warmupNs);
  let interrupted = !warmed;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  rec.startedUs = nowUs();
  if (warmed) {
    state.phase = MEASURE;
    interrupted = !(await sleep(step.intervalNs));
  }
  state.phase = DONE;
  const elapsed = process.hrtime.bigint() - t0;
  const cpu = process.cpuUsage(cpu0);
  for (const w of workers) w.cancel();
  await Promise.all(running);
  await closeAll();
  if (!warmed) return null;

  const hist = newHistogram();
  const byCode = new Array(CODES).fill(0);
  for (const w of workers) {
    hist.add(w.hist);
    for (let c = 0; c < CODES; c++) byCode[c] += w.byCode[c];
  }
  rec.fill(hist, byCode, Number(elapsed), (cpu.user + cpu.system) * 1000);
  if (interrupted) {
    rec.status = 'interrupted';
    rec.error = 'interrupted: the interval was cut short';
  }
  return rec;
}

/**
 * V8 compiles the RPC path only after it has run for a while: pinned to one
 * CPU, the first 4-6 s of a process cost up to 3x the CPU per RPC of later
 * steps. So before the first step, each RPC kind of the steps runs on a
 * shared channel to the first step's target with min(4, largest in-flight)
 * workers for an equal share of 4 s; nothing is recorded. Returns
 * null, or why the target could not be reached (the first step then fails
 * with it, without waiting out the dial timeout a second time).
 */
async function jitWarmup(Service, steps) {
  const rpcs = [...new Set(steps.map((s) => s.rpc))];
  const n = Math.min(4, Math.max(...steps.map((s) => s.inflight)));
  const warmupNs = JIT_WARMUP_NS / BigInt(rpcs.length);
  for (const rpc of rpcs) {
    const step = { ...steps[0], rpc, conn: { kind: 'shared', n: 0, pick: '' }, inflight: n, warmupNs, intervalNs: 1000000n };
    const rec = await runStep(Service, step);
    if (rec === null) return null; // stopped
    if (rec.unreachable) return rec.error;
  }
  log(`JIT warm-up: ${rpcs.join(', ')} for ${Number(JIT_WARMUP_NS) / 1e9}s, not recorded`);
  return null;
}

/** Appends each record to its step's out ('-' is stdout), synced: a killed client keeps whole records. */
class Outputs {
  constructor() {
    this.fds = new Map([['-', 1]]);
  }

  write(path, line) {
    let fd = this.fds.get(path);
    if (fd === undefined) {
      fd = fs.openSync(path, 'a');
      this.fds.set(path, fd);
    }
    fs.writeSync(fd, `${line}\n`);
    if (fd !== 1) fs.fsyncSync(fd);
  }
}

/** Runs the steps in order; returns the exit code. */
async function run(steps) {
  const outs = new Outputs();
  const Service = loadService();
  const env = detectEnv();
  let failed = 0;
  let unreachable = null;
  let unreachableFirst = null; // why the JIT warm-up could not connect: the first step's error
  if (steps[0].warmupNs > 0n) {
    unreachableFirst = await jitWarmup(Service, steps);
    if (stop.signal.aborted) return 1;
  }
  for (const [i, step] of steps.entries()) {
    if (stop.signal.aborted) return 1;
    const { rpc, conn, inflight: n } = step;
    const what = `${rpc} ${conn.kind === 'pool' ? `pool:${conn.n}:${conn.pick}` : conn.kind} inflight=${n}`;
    let rec;
    if (unreachableFirst !== null) {
      rec = new Record(step);
      rec.unreachable = true;
      rec.fail(unreachableFirst);
      unreachableFirst = null;
    } else if (unreachable !== null) {
      rec = new Record(step);
      rec.fail(`target unreachable: not run: ${unreachable}`);
    } else {
      rec = await runStep(Service, step);
      if (rec === null) return 1; // stopped before this step measured anything
    }
    if (rec.unreachable) unreachable = `step ${i + 1} (${what}) could not connect`;
    if (rec.status === 'failed') failed++;
    try {
      outs.write(step.out, rec.json(env));
    } catch (e) {
      log(`write ${step.out === '-' ? 'stdout' : step.out}: ${e.message}`);
      return 1;
    }
    log(`step ${i + 1}/${steps.length} ${what}: ${rec.summaryLine()}`);
    if (rec.status === 'interrupted') return 1;
  }
  return failed > 0 ? 1 : 0;
}

/** Serves grpc-js's channelz (on by default in grpc-js) on 127.0.0.1:port, so rpclab doctor --pid can read this process's channels. */
function serveChannelz(port) {
  const server = new grpc.Server();
  grpc.addAdminServicesToServer(server);
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
    if (err) {
      log(`--channelz-port: ${err.message}`);
      process.exit(2);
    }
    log(`channelz on 127.0.0.1:${bound}`);
  });
}

function main() {
  let steps;
  let czPort = 0;
  try {
    steps = parse(process.argv.slice(2));
    czPort = channelzPort(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    log(e.message);
    process.stderr.write(`${USAGE.split('\n')[0]} (--help: more)\n`);
    process.exit(2);
  }
  if (steps === null) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (czPort > 0) serveChannelz(czPort);
  process.on('SIGINT', () => stop.abort());
  process.on('SIGTERM', () => stop.abort());
  run(steps).then(
    (code) => process.exit(code),
    (e) => {
      log(e.stack || String(e));
      process.exit(1);
    },
  );
}

main();
