// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// The flags of docs/clients.md, parsed and checked as rpclab's own sweep
// checks them. A bad flag throws a UsageError naming the flag; main exits 2.

'use strict';

/** A bad flag value: the flag's name and what is wrong. */
class UsageError extends Error {
  constructor(flag, msg) {
    super(`${flag}: ${msg}`);
    this.flag = flag;
  }
}

const MAX_INFLIGHT = 20000;
const MAX_PAYLOAD = (4 << 20) - 64;

const USAGE = `usage: rpclab-client --target HOST:PORT [--inflight 1,2,4 | --min-inflight A --max-inflight B [--step S]]
  [--conn shared,per-worker,channel-per-worker,local-pool,distinct-args,pool:N] [--rpc unary,streaming]
  [--payload BYTES] [--warmup DUR] [--interval DUR] [--dial-timeout DUR] [--rpc-timeout DUR] [--out FILE]
  [--jit-warmup DUR (default 4s, or RPCLAB_NODE_JIT_WARMUP; 0s: none)]
durations in Go syntax (500ms, 2s, 1m); see docs/clients.md`;

/**
 * The connection layouts. conns(inflight) is how many connections the
 * layout asks for (spec.conns_requested); channels(inflight) how many grpc-js
 * channels (Clients) it makes.
 */
const LAYOUTS = ['shared', 'per-worker', 'channel-per-worker', 'local-pool', 'distinct-args', 'pool'];

function parseConn(s) {
  const p = s.trim().split(':');
  const kind = p[0];
  if (kind === 'pool') {
    const n = p.length === 2 && /^[0-9]+$/.test(p[1]) ? Number(p[1]) : 0;
    if (n < 1 || n > MAX_INFLIGHT) {
      throw new UsageError('--conn', `${JSON.stringify(s)}: want pool:N with N an integer in 1..${MAX_INFLIGHT}`);
    }
    return { kind, n };
  }
  if (!LAYOUTS.includes(kind)) {
    throw new UsageError('--conn', `unknown connection mode ${JSON.stringify(s)} (want ${LAYOUTS.slice(0, -1).join(', ')} or pool:N)`);
  }
  if (p.length !== 1) {
    throw new UsageError('--conn', `${JSON.stringify(kind)} takes no size`);
  }
  return { kind, n: 0 };
}

/** How many connections a layout asks for with inflight workers. */
function connsRequested(conn, inflight) {
  switch (conn.kind) {
    case 'shared':
      return 1;
    case 'pool':
      return conn.n;
    default:
      return inflight;
  }
}

function items(flag, v) {
  return v.split(',').map((s) => {
    s = s.trim();
    if (s === '') throw new UsageError(flag, `empty item in ${JSON.stringify(v)}`);
    return s;
  });
}

function int(flag, v) {
  const s = String(v).trim();
  if (!/^[0-9]+$/.test(s) || !Number.isSafeInteger(Number(s))) {
    throw new UsageError(flag, `${JSON.stringify(v)} is not a non-negative integer`);
  }
  return Number(s);
}

const UNITS = { ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n };
const MAX_DURATION_NS = (1n << 63n) - 1n;

/**
 * Parses a duration as Go's time.ParseDuration does ("1m0s", "1.5s",
 * "300ms") and returns it in nanoseconds as a BigInt. Negative durations are
 * refused (but "-0" is zero).
 */
function goDuration(flag, s) {
  const bad = () => new UsageError(flag, `invalid duration ${JSON.stringify(s)} (want e.g. 500ms, 2s, 1m)`);
  let v = String(s).trim();
  if (v.startsWith('-')) {
    if (v === '-0') return 0n;
    throw new UsageError(flag, `negative duration ${JSON.stringify(s)}`);
  }
  if (v.startsWith('+')) v = v.slice(1);
  if (v === '0') return 0n;
  if (v === '') throw bad();
  let total = 0n;
  const re = /^([0-9]*)(?:\.([0-9]*))?([^0-9.]*)/;
  while (v !== '') {
    const m = re.exec(v);
    const [all, whole, frac = undefined, unitName] = m;
    if ((whole === '' && (frac === undefined || frac === '')) || unitName === '') throw bad();
    const unit = UNITS[unitName];
    if (unit === undefined) throw bad();
    total += BigInt(whole || '0') * unit;
    if (frac) {
      // Exact: fraction digits scaled by the unit, truncated as Go does.
      total += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    }
    if (total > MAX_DURATION_NS) throw new UsageError(flag, `duration ${JSON.stringify(s)} is too long`);
    v = v.slice(all.length);
  }
  return total;
}

/**
 * Parses argv (without node and the script) into the flags, or throws
 * UsageError. env supplies RPCLAB_NODE_JIT_WARMUP, the default of --jit-warmup.
 */
function parse(args, env = {}) {
  const f = {
    target: '',
    inflight: [],
    conns: [],
    rpcs: ['unary'],
    payload: 0,
    warmupNs: 1000000000n,
    intervalNs: 3000000000n,
    dialTimeoutNs: 5000000000n,
    rpcTimeoutNs: 0n, // deadline of each RPC (each ping-pong on a stream); 0: none
    // Calls before the first step, records discarded, so V8 has compiled the
    // RPC path (see README.md); only when --warmup is not zero.
    jitWarmupNs: 4000000000n,
    out: '',
  };
  if (env.RPCLAB_NODE_JIT_WARMUP) f.jitWarmupNs = goDuration('RPCLAB_NODE_JIT_WARMUP', env.RPCLAB_NODE_JIT_WARMUP);
  let list;
  let min;
  let max;
  let step;
  let conns = 'shared,per-worker';
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('-') || a === '-' || a === '--') {
      throw new UsageError(a, 'unexpected argument (flags only, see --help)');
    }
    let name = a.replace(/^--?/, '');
    if (name === 'help' || name === 'h') throw new UsageError('--help', USAGE);
    let value;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    } else {
      i++;
      if (i >= args.length) throw new UsageError(`--${name}`, 'needs a value');
      value = args[i];
    }
    const flag = `--${name}`;
    switch (name) {
      case 'target':
        f.target = value.trim();
        break;
      case 'inflight':
        list = value;
        break;
      case 'min-inflight':
        min = int(flag, value);
        break;
      case 'max-inflight':
        max = int(flag, value);
        break;
      case 'step':
        step = int(flag, value);
        break;
      case 'conn':
        conns = value;
        break;
      case 'rpc':
        f.rpcs = items(flag, value);
        break;
      case 'payload':
        f.payload = int(flag, value);
        break;
      case 'warmup':
        f.warmupNs = goDuration(flag, value);
        break;
      case 'interval':
        f.intervalNs = goDuration(flag, value);
        break;
      case 'dial-timeout':
        f.dialTimeoutNs = goDuration(flag, value);
        break;
      case 'rpc-timeout':
        f.rpcTimeoutNs = goDuration(flag, value);
        break;
      case 'jit-warmup':
        f.jitWarmupNs = goDuration(flag, value);
        break;
      case 'out':
      case 'o':
        f.out = value;
        break;
      default:
        throw new UsageError(flag, 'unknown flag');
    }
  }
  if (f.target === '') throw new UsageError('--target', 'required (HOST:PORT)');
  if (list !== undefined && (min !== undefined || max !== undefined || step !== undefined)) {
    throw new UsageError('--inflight', 'give a list or --min-inflight/--max-inflight, not both');
  }
  if (list !== undefined) {
    f.inflight = items('--inflight', list).map((s) => int('--inflight', s));
  } else if (min !== undefined || max !== undefined) {
    const lo = min ?? 1;
    const hi = max ?? lo;
    const st = step ?? 1;
    if (lo < 1) throw new UsageError('--min-inflight', `must be at least 1, got ${lo}`);
    if (hi < lo) throw new UsageError('--max-inflight', `${hi} is below --min-inflight ${lo}`);
    if (st < 1) throw new UsageError('--step', `must be at least 1, got ${st}`);
    if (hi > MAX_INFLIGHT) throw new UsageError('--max-inflight', `${hi} is above ${MAX_INFLIGHT}`);
    for (let n = lo; n <= hi; n += st) f.inflight.push(n);
  } else {
    f.inflight = [1, 2, 4, 8, 16, 32];
  }
  for (const n of f.inflight) {
    if (n < 1 || n > MAX_INFLIGHT) throw new UsageError('--inflight', `${n} is outside 1..${MAX_INFLIGHT}`);
  }
  f.conns = items('--conn', conns).map(parseConn);
  for (const r of f.rpcs) {
    if (r !== 'unary' && r !== 'streaming') {
      throw new UsageError('--rpc', `unknown RPC kind ${JSON.stringify(r)} (want unary or streaming)`);
    }
  }
  if (f.payload > MAX_PAYLOAD) {
    throw new UsageError('--payload', `${f.payload} is outside 0..${MAX_PAYLOAD} bytes (gRPC's default 4 MiB message limit)`);
  }
  if (f.intervalNs === 0n) throw new UsageError('--interval', 'must be positive');
  if (f.dialTimeoutNs === 0n) throw new UsageError('--dial-timeout', 'must be positive');
  // setTimeout takes at most 2^31-1 ms; longer waits are chained (see sleep in main.js).
  return f;
}

module.exports = { UsageError, parse, goDuration, parseConn, connsRequested, USAGE, MAX_INFLIGHT, MAX_PAYLOAD };
