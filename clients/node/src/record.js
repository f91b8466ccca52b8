// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// One step's result record (docs/results.md, schema/result.schema.json),
// written as one JSON line, the env it carries, and the latency histogram.

'use strict';

const fs = require('node:fs');
const os = require('node:os');
const zlib = require('node:zlib');
const hdr = require('hdr-histogram-js');

const { connsRequested } = require('./steps');

/** Histogram geometry shared by every rpclab client: 1 ns .. 100 s, 3 digits. */
const LOWEST = 1;
const HIGHEST = 100000000000;
const DIGITS = 3;

/** Status code names as the schema spells them, by code value (0..16). */
const CODE_NAMES = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists',
  'PermissionDenied', 'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange',
  'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated',
];
const CODES = CODE_NAMES.length;

/**
 * A histogram of nanoseconds, 1 ns..100 s, 3 digits, with 64-bit counts
 * (a Float64Array: exact up to 2^53 per bucket and in total). Not resizable:
 * values are clamped into range before recording.
 */
function newHistogram() {
  return hdr.build({
    bitBucketSize: 64,
    autoResize: false,
    lowestDiscernibleValue: LOWEST,
    highestTrackableValue: HIGHEST,
    numberOfSignificantValueDigits: DIGITS,
    useWebAssembly: false,
  });
}

const V2_COMPRESSED_COOKIE = 0x1c849304 | 0x10;
// The integer-to-double conversion ratio 1.0 as IEEE 754 bits, big-endian.
const RATIO_ONE = Buffer.from([0x3f, 0xf0, 0, 0, 0, 0, 0, 0]);

/**
 * The histogram in HdrHistogram's compressed V2 form, base64 ("HISTFAAA...").
 *
 * hdr-histogram-js writes two header fields of the uncompressed form unlike
 * the Java, C, Go and Rust ports: normalizingIndexOffset (bytes 8..11) as 1
 * instead of 0, and integerToDoubleValueConversionRatio (bytes 32..39) as the
 * integer 1 instead of the double 1.0. Decoders ignore the first and keep the
 * second, so a Go tool re-encoding a decoded record would carry a ratio of
 * 5e-324. So its output is inflated, those two fields set to the standard
 * values, and deflated again: the uncompressed bytes are then exactly what
 * hdrhistogram-go's Encode writes for the same values (test/record.test.js
 * compares them with an encoding made by hdrhistogram-go).
 */
function encode(h) {
  const js = Buffer.from(hdr.encodeIntoCompressedBase64(h), 'base64');
  if (js.readInt32BE(0) !== V2_COMPRESSED_COOKIE) throw new Error('hdr-histogram-js: unexpected encoding cookie');
  const len = js.readInt32BE(4);
  const raw = zlib.inflateSync(js.subarray(8, 8 + len));
  raw.writeInt32BE(0, 8);
  RATIO_ONE.copy(raw, 32);
  const z = zlib.deflateSync(raw, { level: zlib.constants.Z_BEST_COMPRESSION });
  const out = Buffer.alloc(8 + z.length);
  out.writeInt32BE(V2_COMPRESSED_COOKIE, 0);
  out.writeInt32BE(z.length, 4);
  z.copy(out, 8);
  return out.toString('base64');
}

/**
 * The latency summary of a histogram as rpclab's other writers give it:
 * min is the lowest equivalent value of the smallest bucket, every quantile
 * and the max the highest equivalent value of its bucket (as hdrhistogram-go
 * computes them, so a decoded record's Max() equals p100_ns).
 */
const NO_LATENCY = Object.freeze({ min_ns: 0, mean_ns: 0, p50_ns: 0, p90_ns: 0, p99_ns: 0, p999_ns: 0, p100_ns: 0 });
function summary(h) {
  if (h.totalCount === 0) return NO_LATENCY;
  return {
    min_ns: h.lowestEquivalentValue(h.minNonZeroValue),
    mean_ns: h.mean,
    p50_ns: h.getValueAtPercentile(50),
    p90_ns: h.getValueAtPercentile(90),
    p99_ns: h.getValueAtPercentile(99),
    p999_ns: h.getValueAtPercentile(99.9),
    p100_ns: h.highestEquivalentValue(h.maxValue),
  };
}

/** Expands a kernel CPU list ("0-2,5"); [] when it is not one. */
function cpuList(s) {
  const out = [];
  for (const part of s.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const m = /^([0-9]+)(?:-([0-9]+))?$/.exec(part);
    if (!m) return [];
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    for (let c = lo; c <= hi; c++) out.push(c);
  }
  return out;
}

function readTrim(p) {
  try {
    return fs.readFileSync(p, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Which client measured, on what. */
function detectEnv() {
  let hostCpus = cpuList(readTrim('/sys/devices/system/cpu/online')).length;
  if (hostCpus === 0) hostCpus = os.cpus().length || 1;
  const allowed = readTrim('/proc/self/status')
    .split('\n')
    .find((l) => l.startsWith('Cpus_allowed_list:'));
  let clientCpus = allowed ? cpuList(allowed.slice('Cpus_allowed_list:'.length).trim()) : [];
  if (clientCpus.length >= hostCpus) clientCpus = []; // not pinned
  const env = {
    language: 'node',
    grpc_impl: 'grpc-js',
    grpc_version: require('@grpc/grpc-js/package.json').version,
    runtime_version: `node ${process.version} (V8 ${process.versions.v8}, one event loop)`,
    host_cpus: hostCpus,
  };
  if (clientCpus.length > 0) env.client_cpus = clientCpus;
  env.hostname = readTrim('/proc/sys/kernel/hostname') || os.hostname();
  env.os = process.platform;
  return env;
}

/** RFC 3339 in UTC with microseconds from a time in µs since the epoch. */
function rfc3339(epochUs) {
  const ms = Math.floor(epochUs / 1000);
  const us = Math.floor(epochUs) % 1000;
  return new Date(ms).toISOString().replace(/Z$/, `${String(us).padStart(3, '0')}Z`);
}

/**
 * The wall clock in µs since the epoch (at millisecond resolution: Date.now;
 * performance.timeOrigin + performance.now() would be finer but follows the
 * monotonic clock, which drifts from the wall clock the driver's connection
 * samples are stamped with whenever the system clock is adjusted).
 */
function nowUs() {
  return Date.now() * 1000;
}

/** One step's result; json(env) is the record as the schema has it. */
class Record {
  constructor(step) {
    this.step = step;
    this.status = 'ok';
    this.error = '';
    this.startedUs = nowUs();
    this.unreachable = false;
    this.requests = 0;
    this.byCode = new Array(CODES).fill(0);
    this.durationNs = 0;
    this.throughput = 0;
    this.latency = NO_LATENCY;
    this.hdr = '';
    this.cpuNs = 0;
    this.cpuPerRpc = 0;
  }

  fail(why) {
    this.status = 'failed';
    this.error = why;
  }

  /** Fills in the measured figures; fails the step if no RPC succeeded. */
  fill(h, byCode, elapsedNs, cpuNs) {
    this.byCode = byCode;
    this.requests = byCode.reduce((a, b) => a + b, 0);
    const ok = byCode[0];
    this.durationNs = elapsedNs;
    if (elapsedNs > 0) this.throughput = ok / (elapsedNs / 1e9);
    this.latency = summary(h);
    this.hdr = encode(h);
    this.cpuNs = cpuNs;
    if (this.requests > 0) this.cpuPerRpc = cpuNs / this.requests;
    if (ok === 0) {
      this.fail(this.requests === 0 ? 'no RPC completed in the interval' : `every RPC failed (${this.requests})`);
    }
  }

  summaryLine() {
    if (this.status !== 'ok') return `${this.status}: ${this.error}`;
    const busy = this.durationNs > 0 ? this.cpuNs / this.durationNs : 0;
    return `${this.throughput.toFixed(0)} rps, p99 ${(this.latency.p99_ns / 1e3).toFixed(1)} µs, cpu ${(this.cpuPerRpc / 1e3).toFixed(1)} µs/rpc (busy ${busy.toFixed(2)})`;
  }

  /** The record as one JSON line (without the newline); a step's client_cpus replaces env's. */
  json(env) {
    const st = this.step;
    const spec = {
      target: st.target,
      rpc: st.rpc,
      conn_mode: st.conn.kind,
      conns_requested: connsRequested(st.conn, st.inflight),
    };
    if (st.conn.kind === 'pool') spec.pick = st.conn.pick;
    Object.assign(spec, {
      inflight: st.inflight,
      payload_bytes: st.payloadBytes,
      warmup_ns: Number(st.warmupNs),
      interval_ns: Number(st.intervalNs),
      load_model: 'closed',
    });
    const errors = {};
    for (let c = 1; c < CODES; c++) {
      if (this.byCode[c] > 0) errors[CODE_NAMES[c]] = this.byCode[c];
    }
    const r = { schema_version: 1, kind: 'ping', status: this.status };
    if (this.error !== '') r.error = this.error;
    Object.assign(r, {
      started_at: rfc3339(this.startedUs),
      spec,
      // undefined: JSON.stringify leaves the key out.
      env: st.clientCpus === null ? env : { ...env, client_cpus: st.clientCpus.length > 0 ? st.clientCpus : undefined },
      requests: this.requests,
      errors,
      duration_ns: this.durationNs,
      throughput_rps: finite(this.throughput),
      latency: { ...this.latency, mean_ns: finite(this.latency.mean_ns) },
      histogram_hdr: this.hdr,
      conns_observed: -1,
      client_cpu_ns: this.cpuNs,
      client_cpu_ns_per_rpc: finite(this.cpuPerRpc),
    });
    return JSON.stringify(r);
  }
}

function finite(v) {
  return Number.isFinite(v) ? v : 0;
}

module.exports = {
  CODE_NAMES,
  CODES,
  HIGHEST,
  LOWEST,
  Record,
  cpuList,
  detectEnv,
  encode,
  newHistogram,
  nowUs,
  rfc3339,
  summary,
};
