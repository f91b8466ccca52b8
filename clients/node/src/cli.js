// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// The command line (docs/clients.md): --steps FILE, or the human flags,
// which build the same steps. Parsed by util.parseArgs; a bad flag or steps
// file throws a UsageError, on which main prints it and USAGE and exits 2.

'use strict';

const { parseArgs } = require('node:util');

const { MAX_INFLIGHT, StepError, fromObject, loadSteps } = require('./steps');

/** A bad command line: what is wrong, naming the flag. */
class UsageError extends Error {}

const USAGE = `usage: rpclab-client --steps FILE [--dial-timeout DUR] [--rpc-timeout DUR] [--jit-warmup DUR]
   or: rpclab-client --target HOST:PORT [--inflight 1,2,4 | --min-inflight A --max-inflight B [--step S]]
  [--conn shared,per-worker,channel-per-worker,local-pool,distinct-args,pool:N[:least-loaded]] [--rpc unary,streaming]
  [--payload BYTES] [--warmup DUR] [--interval DUR] [--dial-timeout DUR] [--rpc-timeout DUR] [--out FILE]
  [--jit-warmup DUR (default 4s, or RPCLAB_NODE_JIT_WARMUP; 0s: none)]
durations in Go syntax (500ms, 2s, 1m); --steps FILE: JSON Lines (docs/step.schema.json)`;

// The flags a sweep is made of; none goes with --steps.
const SWEEP = ['target', 'inflight', 'min-inflight', 'max-inflight', 'step', 'conn', 'rpc', 'payload', 'warmup', 'interval', 'out'];
const OPTIONS = Object.fromEntries(
  [...SWEEP, 'steps', 'dial-timeout', 'rpc-timeout', 'jit-warmup'].map((k) => [k, { type: 'string' }]),
);
OPTIONS.out.short = 'o';
OPTIONS.help = { type: 'boolean', short: 'h' };

const UNITS = { ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n };
const DURATION = /^(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const PART = /([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)/g;

/**
 * Parses a duration as Go's time.ParseDuration does ("1m0s", "1.5s",
 * "300ms", "0") into ns as a BigInt; negative ones are refused. No npm
 * package parses Go's syntax exactly (parse-duration takes "5" as 5 ms).
 */
function goDuration(flag, s) {
  const v = s.trim().replace(/^\+/, '');
  if (v === '0' || v === '-0') return 0n;
  if (!DURATION.test(v)) throw new UsageError(`${flag}: invalid duration ${JSON.stringify(s)} (want e.g. 500ms, 2s, 1m)`);
  let ns = 0n;
  for (const [, whole, frac = '', unit] of v.matchAll(PART)) {
    // Exact: fraction digits scaled by the unit, truncated as Go does.
    ns += BigInt(whole || '0') * UNITS[unit] + (BigInt(frac || '0') * UNITS[unit]) / 10n ** BigInt(frac.length);
  }
  if (ns >= 1n << 63n) throw new UsageError(`${flag}: duration ${JSON.stringify(s)} is too long`);
  return ns;
}

function count(flag, v) {
  if (!/^[0-9]+$/.test(v.trim()) || !Number.isSafeInteger(Number(v))) {
    throw new UsageError(`${flag}: ${JSON.stringify(v)} is not a non-negative integer`);
  }
  return Number(v);
}

function list(flag, v, item) {
  return v.split(',').map((s) => {
    s = s.trim();
    if (s === '') throw new UsageError(`${flag}: empty item in ${JSON.stringify(v)}`);
    try {
      return item(s);
    } catch (e) {
      throw e instanceof UsageError ? e : new UsageError(`${flag}: ${e.message}`);
    }
  });
}

/** How a run's steps run, beyond the step spec. */
function options(a, env) {
  const o = {
    dialTimeoutNs: goDuration('--dial-timeout', a['dial-timeout'] ?? '5s'),
    rpcTimeoutNs: goDuration('--rpc-timeout', a['rpc-timeout'] ?? '0'), // deadline of each RPC; 0: none
    // Calls before the first step, records discarded, so V8 has compiled the
    // RPC path (see README.md); only when the first step warms up.
    jitWarmupNs: goDuration('--jit-warmup', a['jit-warmup'] ?? env.RPCLAB_NODE_JIT_WARMUP ?? '4s'),
  };
  if (o.dialTimeoutNs === 0n) throw new UsageError('--dial-timeout: must be positive');
  return o;
}

// The flag of each step field.
const FLAGS = { target: '--target', rpc: '--rpc', conn: '--conn', inflight: '--inflight', payload_bytes: '--payload', warmup_ns: '--warmup', interval_ns: '--interval' };

/** The steps the human flags make, in the order rpc, conn, inflight, each checked as a steps file's line is. */
function sweep(a) {
  if (a.target === undefined) throw new UsageError('--target: required (HOST:PORT) without --steps');
  const ranged = a['min-inflight'] !== undefined || a['max-inflight'] !== undefined || a.step !== undefined;
  if (a.inflight !== undefined && ranged) throw new UsageError('--inflight: give a list or --min-inflight/--max-inflight, not both');
  let inflight = a.inflight === undefined ? [1, 2, 4, 8, 16, 32] : list('--inflight', a.inflight, (s) => count('--inflight', s));
  if (ranged) {
    const lo = a['min-inflight'] === undefined ? 1 : count('--min-inflight', a['min-inflight']);
    const hi = a['max-inflight'] === undefined ? lo : count('--max-inflight', a['max-inflight']);
    const st = a.step === undefined ? 1 : count('--step', a.step);
    if (!(lo >= 1 && lo <= hi && hi <= MAX_INFLIGHT && st >= 1)) {
      throw new UsageError(`--min-inflight/--max-inflight/--step: want 1 <= A <= B <= ${MAX_INFLIGHT}, S >= 1`);
    }
    inflight = [];
    for (let n = lo; n <= hi; n += st) inflight.push(n);
  }
  const line = {
    target: a.target.trim(),
    service: 'benchmark',
    payload_bytes: a.payload === undefined ? 0 : count('--payload', a.payload),
    warmup_ns: Number(goDuration('--warmup', a.warmup ?? '1s')),
    interval_ns: Number(goDuration('--interval', a.interval ?? '3s')),
    out: a.out || '-',
  };
  return list('--rpc', a.rpc ?? 'unary', String).flatMap((rpc) =>
    list('--conn', a.conn ?? 'shared,per-worker', String).flatMap((conn) =>
      inflight.map((n) => {
        try {
          return fromObject({ ...line, rpc, conn, inflight: n }, 'the command line');
        } catch (e) {
          throw e instanceof StepError ? new UsageError(`${FLAGS[e.field]}: ${e.why}`) : e;
        }
      }),
    ),
  );
}

/**
 * Parses argv (without node and the script): {steps, opts, truncate}, where
 * truncate is the --out file a human command line starts afresh (null with
 * --steps, whose steps append), or {help: true}. Throws UsageError.
 */
function parse(argv, env = {}) {
  let a;
  try {
    a = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    if (!String(e.code).startsWith('ERR_PARSE_ARGS_')) throw e;
    throw new UsageError(e.message);
  }
  if (a.help) return { help: true };
  const opts = options(a, env);
  if (a.steps === undefined) return { steps: sweep(a), opts, truncate: a.out || null };
  const given = SWEEP.filter((k) => a[k] !== undefined).map((k) => `--${k}`);
  if (given.length > 0) throw new UsageError(`--steps: not allowed with ${given.join(', ')}`);
  try {
    return { steps: loadSteps(a.steps), opts, truncate: null };
  } catch (e) {
    throw new UsageError(`--steps: ${e.message}`);
  }
}

module.exports = { USAGE, UsageError, goDuration, parse };
