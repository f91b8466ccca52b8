// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// The command line, --steps FILE (util.parseArgs), and the step spec
// (docs/clients.md, "The step spec"): one step per line of a JSON Lines file,
// read with JSON.parse and validated by Ajv against schema/step.schema.json,
// the one schema, read from the checkout (nothing is copied). Every line is
// checked before any step runs; a bad one throws a StepError naming the line
// and the field, on which main exits 2.

'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const Ajv2020 = require('ajv/dist/2020');

const SCHEMA = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'schema', 'step.schema.json'), 'utf8'));
const MAX_INFLIGHT = SCHEMA.properties.inflight.maximum;
const validate = new Ajv2020().compile(SCHEMA);

/** A bad step: where (file:line), the field (null: the whole line), and why. */
class StepError extends Error {
  constructor(where, field, why) {
    super(field ? `${where}: ${field}: ${why}` : `${where}: ${why}`);
    this.field = field;
    this.why = why;
  }
}

/** How many connections a layout asks for with inflight workers (spec.conns_requested). */
function connsRequested(conn, inflight) {
  if (conn.kind === 'shared') return 1;
  return conn.kind === 'pool' ? conn.n : inflight;
}

/**
 * The step of one decoded line, validated against the schema: {target,
 * service, rpc, conn: {kind, n (pool:N's size), pick (its policy)},
 * inflight, payloadBytes, warmupNs, intervalNs (BigInt ns), clientCpus
 * (null: not given), out ('-' is stdout)}.
 */
function fromObject(d, where) {
  if (!validate(d)) {
    const [e] = validate.errors;
    const field = e.instancePath.split('/')[1] ?? e.params.missingProperty ?? e.params.additionalProperty ?? null;
    const got = e.instancePath === '' ? '' : `, got ${JSON.stringify(d[field])}`;
    throw new StepError(where, field, `${e.message}${got}`);
  }
  // What the schema cannot say: the services and pool sizes of this client.
  if (d.service !== 'benchmark') throw new StepError(where, 'service', `${JSON.stringify(d.service)} is not supported by the Node client`);
  const [kind, n = '0', pick = 'round-robin'] = d.conn.split(':');
  if (Number(n) > MAX_INFLIGHT) throw new StepError(where, 'conn', `a pool of ${n} channels is more than ${MAX_INFLIGHT}`);
  return {
    target: d.target,
    service: d.service,
    rpc: d.rpc,
    conn: kind === 'pool' ? { kind, n: Number(n), pick } : { kind, n: 0, pick: '' },
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

const USAGE = `usage: rpclab-client --steps FILE

rpclab's Node client: closed-loop gRPC load on grpc-js, one record per step.
Humans run it through \`rpclab sweep --client node\`, which writes the steps file.

  --steps FILE  the steps to run: JSON Lines, one step per line
                (docs/clients.md, schema/step.schema.json)
  --channelz-port PORT  serve grpc-js's channelz (grpc.channelz.v1) on 127.0.0.1:PORT,
                for rpclab doctor --pid --channelz (default: off)
  -h, --help    this text

exit codes: 0 every step ok, 1 a step failed, 2 bad input (flags or steps file)`;

/** A bad command line or steps file: main prints it and USAGE and exits 2. */
class UsageError extends Error {}

const OPTIONS = { steps: { type: 'string' }, 'channelz-port': { type: 'string' }, help: { type: 'boolean', short: 'h' } };

/** argv's --channelz-port: a TCP port, or 0 when not given. Throws UsageError. */
function channelzPort(argv) {
  const v = parseArgs({ args: argv, options: OPTIONS }).values['channelz-port'];
  if (v === undefined) return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--channelz-port: ${v} is not a TCP port`);
  return n;
}

/** The steps of argv's --steps FILE (argv without node and the script), or null for --help. Throws UsageError. */
function parse(argv) {
  let a;
  try {
    a = parseArgs({ args: argv, options: OPTIONS }).values;
  } catch (e) {
    if (!String(e.code).startsWith('ERR_PARSE_ARGS_')) throw e;
    throw new UsageError(e.message);
  }
  if (a.help) return null;
  if (a.steps === undefined) throw new UsageError('--steps FILE: required');
  try {
    return loadSteps(a.steps);
  } catch (e) {
    throw new UsageError(`--steps: ${e.message}`);
  }
}

module.exports = { SCHEMA, StepError, USAGE, UsageError, channelzPort, connsRequested, loadSteps, parse };
