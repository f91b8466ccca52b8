// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// The step spec (docs/clients.md, "The step spec"; docs/step.schema.json):
// one step per line of a JSON Lines file, read with JSON.parse and checked
// whole before any step runs. A bad line throws a StepError naming the line
// and the field; main exits 2 on it.

'use strict';

const fs = require('node:fs');

const MAX_INFLIGHT = 20000;
const MAX_PAYLOAD = (4 << 20) - 64;
const SERVICES = ['benchmark', 'ydb-debug'];
const RPCS = ['unary', 'streaming'];
const LAYOUTS = ['shared', 'per-worker', 'channel-per-worker', 'local-pool', 'distinct-args', 'pool'];

/** A bad steps file: where (file:line), the field, and what is wrong. */
class StepError extends Error {
  constructor(where, field, msg) {
    super(field ? `${where}: ${field}: ${msg}` : `${where}: ${msg}`);
    this.field = field;
  }
}

/**
 * Parses a layout as --conn takes it into {kind, n} (n: the pool's size);
 * throws an Error saying what is wrong. The Node client picks round-robin only.
 */
function parseConn(s) {
  const p = s.trim().split(':');
  const kind = p[0];
  if (kind === 'pool') {
    const n = (p.length === 2 || p.length === 3) && /^[0-9]+$/.test(p[1]) ? Number(p[1]) : 0;
    if (n < 1 || n > MAX_INFLIGHT) {
      throw new Error(`${JSON.stringify(s)}: want pool:N with N an integer in 1..${MAX_INFLIGHT}`);
    }
    if (p.length === 3 && p[2] !== 'round-robin') {
      throw new Error(`${JSON.stringify(s)}: the Node client picks round-robin only`);
    }
    return { kind, n };
  }
  if (!LAYOUTS.includes(kind)) {
    throw new Error(`unknown connection mode ${JSON.stringify(s)} (want ${LAYOUTS.slice(0, -1).join(', ')} or pool:N)`);
  }
  if (p.length !== 1) throw new Error(`${JSON.stringify(kind)} takes no size`);
  return { kind, n: 0 };
}

/** How many connections a layout asks for with inflight workers (spec.conns_requested). */
function connsRequested(conn, inflight) {
  if (conn.kind === 'shared') return 1;
  return conn.kind === 'pool' ? conn.n : inflight;
}

const string = (v) => (typeof v !== 'string' ? 'want a string' : v === '' ? 'must not be empty' : null);

const intIn = (lo, hi) => (v) => {
  if (!Number.isSafeInteger(v)) return `want an integer, got ${JSON.stringify(v)}`;
  if (v < lo || (hi !== undefined && v > hi)) return `${v} is outside ${lo}..${hi ?? ''}`;
  return null;
};

const oneOf = (choices, supported) => (v) => {
  if (!choices.includes(v)) return `want one of ${choices.join(', ')}, got ${JSON.stringify(v)}`;
  return supported.includes(v) ? null : `${JSON.stringify(v)} is not supported by the Node client`;
};

function conn(v) {
  if (typeof v !== 'string') return 'want a string';
  try {
    parseConn(v);
    return null;
  } catch (e) {
    return e.message;
  }
}

function cpus(v) {
  if (!Array.isArray(v)) return 'want an array of CPU numbers';
  return v.map(intIn(0)).find((e) => e !== null) ?? null;
}

// Each field's check: null if the value is good, else what is wrong.
const FIELDS = {
  target: string,
  service: oneOf(SERVICES, ['benchmark']),
  rpc: oneOf(RPCS, RPCS),
  conn,
  inflight: intIn(1, MAX_INFLIGHT),
  payload_bytes: intIn(0, MAX_PAYLOAD),
  warmup_ns: intIn(0),
  interval_ns: intIn(1),
  client_cpus: cpus,
  out: string,
};
const OPTIONAL = ['client_cpus'];

/**
 * The step of one decoded line, checked field by field: {target, service,
 * rpc, conn, inflight, payloadBytes, warmupNs, intervalNs (BigInt ns),
 * clientCpus (null: not given), out ('' is stdout)}.
 */
function fromObject(d, where) {
  if (d === null || typeof d !== 'object' || Array.isArray(d)) throw new StepError(where, null, 'not a JSON object');
  for (const k of Object.keys(d)) {
    if (!Object.hasOwn(FIELDS, k)) throw new StepError(where, k, 'unknown field');
  }
  for (const [k, check] of Object.entries(FIELDS)) {
    if (!Object.hasOwn(d, k)) {
      if (OPTIONAL.includes(k)) continue;
      throw new StepError(where, k, 'missing (required)');
    }
    const why = check(d[k]);
    if (why !== null) throw new StepError(where, k, why);
  }
  return {
    target: d.target,
    service: d.service,
    rpc: d.rpc,
    conn: parseConn(d.conn),
    inflight: d.inflight,
    payloadBytes: d.payload_bytes,
    warmupNs: BigInt(d.warmup_ns),
    intervalNs: BigInt(d.interval_ns),
    clientCpus: d.client_cpus ?? null,
    out: d.out,
  };
}

/** Reads and checks every step of the steps file at path. */
function loadSteps(path) {
  let text;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    throw new StepError(path, null, `cannot read: ${e.message}`);
  }
  const steps = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${path}:${i + 1}`;
    let d;
    try {
      d = JSON.parse(line);
    } catch (e) {
      throw new StepError(where, null, `not JSON: ${e.message}`);
    }
    steps.push(fromObject(d, where));
  });
  if (steps.length === 0) throw new StepError(path, null, 'no steps');
  return steps;
}

module.exports = { LAYOUTS, MAX_INFLIGHT, MAX_PAYLOAD, RPCS, StepError, connsRequested, fromObject, loadSteps, parseConn };
