// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// A pool of grpc-js channels to one target, each with its own TCP
// connection, behind grpc-js's Channel interface, so a client takes it as its
// one channel through the channelOverride option:
//
//   const pool = new ChannelPool(target, grpc.credentials.createInsecure(), { size: 4 });
//   const client = new FooClient(target, grpc.credentials.createInsecure(), { channelOverride: pool });
//
// Each call's createCall goes to the channel the policy picks, and the call
// stays there. The rules (size, picks, in flight, skipped states, redial,
// close, growth, metrics) are docs/pool.md's. See README.md.

'use strict';

const os = require('node:os');
const grpc = require('@grpc/grpc-js');

const VERSION = require('./package.json').version;
const ConnectivityState = grpc.connectivityState;

/** The largest size (and maxConnections): the same in all of rpclab's pools. */
const MAX_SIZE = 1024;
/** Milliseconds close() lets calls in flight finish before it cancels them. */
const DEFAULT_GRACE_MS = 5000;
/** Milliseconds a channel may stay in TRANSIENT_FAILURE before it is replaced. */
const DEFAULT_REDIAL_AFTER_MS = 5000;
/** The redial delay doubles while the target stays down, up to this. */
const MAX_REDIAL_AFTER_MS = 120000;
/** Milliseconds a channel added by growth may carry no call before it is retired. */
const DEFAULT_IDLE_TIMEOUT_MS = 30000;

/**
 * Makes grpc-js keep a channel's subchannels in a pool of its own instead of
 * the process-wide one, where channels with identical options share one
 * subchannel (one TCP connection). With it each channel of the pool connects
 * on its own (measured by the conformance suite).
 */
const LOCAL_SUBCHANNEL_POOL = 'grpc.use_local_subchannel_pool';

/** How the pool picks a channel for each call. */
const Policy = Object.freeze({
  /** The candidate channels in turn. */
  ROUND_ROBIN: 'round-robin',
  /** Power of two choices: of two candidates drawn at random, the one with fewer calls in flight. */
  LEAST_LOADED: 'least-loaded',
});
const POLICIES = Object.values(Policy);

/** The CPUs this process may use, clamped to 2..8 (docs/pool.md). */
function defaultSize() {
  const n = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.min(Math.max(n, 2), 8);
}

function usable(state) {
  return state === ConnectivityState.READY || state === ConnectivityState.IDLE;
}

/**
 * The indexes of the channels a call may go to, given their states: the
 * usable ones (READY, or IDLE, which a call makes connect) when there is one,
 * else all of them, where grpc-js fails the call fast with UNAVAILABLE (or
 * holds it, for waitForReady).
 */
function candidates(states) {
  const out = [];
  for (let i = 0; i < states.length; i++) if (usable(states[i])) out.push(i);
  return out.length > 0 ? out : states.map((_, i) => i);
}

/**
 * The channel for the next call among cands: ROUND_ROBIN the start-th
 * candidate (start is the pool's counter); LEAST_LOADED two different
 * candidates drawn at random (random() in [0, 1)), the one with fewer calls
 * in flight, the first drawn on a tie.
 */
function choose(policy, cands, inflight, start, random = Math.random) {
  const n = cands.length;
  if (policy === Policy.ROUND_ROBIN || n === 1) return cands[start % n];
  const a = Math.floor(random() * n);
  let b = Math.floor(random() * (n - 1));
  if (b >= a) b++;
  const i = cands[a];
  const j = cands[b];
  return inflight[j] < inflight[i] ? j : i;
}

/** choose among the candidates of states: the pool's whole pick. */
function pick(policy, states, inflight, start, random = Math.random) {
  return choose(policy, candidates(states), inflight, start, random);
}

/**
 * The pool's state from its channels' (gRPC's round_robin rule): READY if one
 * is, else CONNECTING, else IDLE, else TRANSIENT_FAILURE; SHUTDOWN only when
 * every channel is.
 */
function aggregate(states) {
  for (const want of [ConnectivityState.READY, ConnectivityState.CONNECTING, ConnectivityState.IDLE]) {
    if (states.includes(want)) return want;
  }
  if (states.length > 0 && states.every((s) => s === ConnectivityState.SHUTDOWN)) return ConnectivityState.SHUTDOWN;
  return ConnectivityState.TRANSIENT_FAILURE;
}

function invalid(ErrorType, code, message) {
  const err = new ErrorType(`rpclab pool: ${message}`);
  err.code = code;
  return err;
}

const show = (v) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/**
 * Throws unless target is a non-empty string gRPC can parse (docs/pool.md:
 * no whitespace or control character; for no scheme, dns:, ipv4: or ipv6:,
 * a host and, if given, a port in 1..65535).
 */
function checkTarget(target) {
  if (typeof target !== 'string' || target === '') {
    throw invalid(TypeError, 'ERR_INVALID_ARG_VALUE', `target must be a non-empty string, got ${show(target)}`);
  }
  if ([...target].some((c) => /\s/.test(c) || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
    throw invalid(TypeError, 'ERR_INVALID_ARG_VALUE', `target ${show(target)} has whitespace or a control character`);
  }
  const colon = target.indexOf(':');
  const scheme = colon >= 0 ? target.slice(0, colon) : '';
  let rest = colon >= 0 ? target.slice(colon + 1) : '';
  let addrs;
  if (['dns', 'ipv4', 'ipv6'].includes(scheme)) {
    if (rest.startsWith('//')) {
      const slash = rest.indexOf('/', 2);
      rest = slash >= 0 ? rest.slice(slash + 1) : '';
    }
    addrs = scheme === 'dns' ? [rest] : rest.split(',');
  } else if (colon >= 0 && /^[A-Za-z][A-Za-z0-9+.-]*$/.test(scheme) && !/^\d/.test(rest)) {
    return; // another scheme (unix:, xds:, a resolver's): grpc-js's to judge
  } else if ((target.match(/:/g) || []).length > 1 && !target.startsWith('[')) {
    return; // a bare IPv6 address
  } else {
    addrs = [target];
  }
  for (const addr of addrs) {
    const m = /^(?:\[([^\]]*)\]|([^:]*))(?::([^:]*))?$/.exec(addr);
    const host = m && (m[1] !== undefined ? m[1] : m[2]);
    if (!m || !host) throw invalid(TypeError, 'ERR_INVALID_ARG_VALUE', `target ${show(target)} has an empty host`);
    const port = m[3];
    if (port !== undefined && !(/^\d+$/.test(port) && +port >= 1 && +port <= 65535)) {
      throw invalid(TypeError, 'ERR_INVALID_ARG_VALUE', `target ${show(target)}: port ${show(port)} is not a number in 1..65535`);
    }
  }
}

function checkCount(value, what) {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw invalid(TypeError, 'ERR_INVALID_ARG_TYPE', `${what} must be an integer, got ${show(value)}`);
  }
  if (value < 1) throw invalid(RangeError, 'ERR_OUT_OF_RANGE', `${what} must be at least 1, got ${value}`);
  if (value > MAX_SIZE) throw invalid(RangeError, 'ERR_OUT_OF_RANGE', `${what} ${value} is above ${MAX_SIZE} (MAX_SIZE)`);
  return value;
}

function checkMs(value, what, zeroOk) {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw invalid(TypeError, 'ERR_INVALID_ARG_TYPE', `${what} must be a number of milliseconds, got ${show(value)}`);
  }
  if (value < 0 || (value === 0 && !zeroOk)) {
    throw invalid(RangeError, 'ERR_OUT_OF_RANGE', `${what} must be ${zeroOk ? 'at least' : 'above'} 0, got ${value}`);
  }
  return value;
}

/** docs/pool.md's instruments, through @opentelemetry/api if installed. */
function instruments(meterProvider) {
  let api;
  try {
    api = require('@opentelemetry/api');
  } catch {
    return null; // an optional peer dependency: no API, no metrics
  }
  const meter = (meterProvider || api.metrics).getMeter('@rpclab/grpc-pool', VERSION);
  return {
    size: meter.createUpDownCounter('rpclab.pool.size', { unit: '{connection}', description: 'Channels in the pool.' }),
    inflight: meter.createUpDownCounter('rpclab.pool.inflight', { unit: '{request}', description: 'Calls and streams in flight, per channel.' }),
    picks: meter.createCounter('rpclab.pool.picks', { unit: '{pick}', description: 'Calls and streams started, per channel.' }),
    redials: meter.createCounter('rpclab.pool.redials', { unit: '{redial}', description: 'Channels replaced after TRANSIENT_FAILURE.' }),
    resizes: meter.createCounter('rpclab.pool.resizes', { unit: '{resize}', description: 'Channels added or retired by growth.' }),
  };
}

/** One channel of the pool and its bookkeeping. */
class Slot {
  constructor(channel, index, grown, delay, target) {
    this.channel = channel;
    this.index = index;
    this.grown = grown;
    this.inflight = 0;
    this.idleSince = Date.now();
    this.tfSince = null;
    this.delay = delay;
    this.attrs = { 'rpclab.pool.target': target, 'rpclab.pool.connection': index };
  }
}

/**
 * Channels to target behind grpc-js's Channel interface (pass the pool as a
 * client's channelOverride). Construction does not wait for the target: the
 * channels start connecting at once, and connect() waits for them.
 *
 * credentials: grpc.ChannelCredentials (grpc.credentials.createInsecure()
 * for plaintext): required. options: size (1..MAX_SIZE; default
 * defaultSize(), the CPUs clamped to 2..8), policy ('round-robin', the
 * default, or 'least-loaded'), channelOptions (given to every channel, plus
 * grpc.use_local_subchannel_pool = 1 unless they set it), maxConnections and
 * streamsPerConnection (growth at the server's stream limit, off unless
 * maxConnections is above size), idleTimeoutMs, redialAfterMs, meterProvider
 * (an OpenTelemetry MeterProvider; default the global one).
 */
class ChannelPool {
  constructor(target, credentials, options = {}) {
    checkTarget(target);
    if (credentials === null || typeof credentials !== 'object' || typeof credentials.compose !== 'function') {
      throw invalid(TypeError, 'ERR_INVALID_ARG_TYPE', `credentials must be grpc.ChannelCredentials (grpc.credentials.createInsecure() for plaintext), got ${show(credentials)}`);
    }
    if (options === null || typeof options !== 'object') {
      throw invalid(TypeError, 'ERR_INVALID_ARG_TYPE', `options must be an object, got ${show(options)}`);
    }
    const {
      size = defaultSize(),
      policy = Policy.ROUND_ROBIN,
      channelOptions = {},
      maxConnections,
      streamsPerConnection,
      idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS,
      redialAfterMs = DEFAULT_REDIAL_AFTER_MS,
      meterProvider,
    } = options;
    checkCount(size, 'size');
    if (!POLICIES.includes(policy)) {
      throw invalid(TypeError, 'ERR_INVALID_ARG_VALUE', `unknown policy ${show(policy)} (want ${POLICIES.map((p) => `"${p}"`).join(' or ')})`);
    }
    if (maxConnections !== undefined) {
      checkCount(maxConnections, 'maxConnections');
      if (maxConnections < size) throw invalid(RangeError, 'ERR_OUT_OF_RANGE', `maxConnections ${maxConnections} is below size ${size}`);
      if (maxConnections > size && streamsPerConnection === undefined) {
        throw invalid(TypeError, 'ERR_INVALID_ARG_VALUE', "maxConnections needs streamsPerConnection (grpc-js does not expose the server's SETTINGS)");
      }
    }
    if (streamsPerConnection !== undefined) checkCount(streamsPerConnection, 'streamsPerConnection');
    checkMs(idleTimeoutMs, 'idleTimeoutMs', false);
    checkMs(redialAfterMs, 'redialAfterMs', false);

    this.target = target;
    this.policy = policy;
    this.size = size;
    this.max = maxConnections === undefined ? size : maxConnections;
    this.limit = streamsPerConnection;
    this.idleTimeoutMs = idleTimeoutMs;
    this.redialAfterMs = redialAfterMs;
    /** Channels replaced after TRANSIENT_FAILURE so far. */
    this.redials = 0;
    /** Channels added or retired by growth so far. */
    this.resizes = 0;
    this.closed = false;
    this.next = 0;
    this.nextIndex = size;
    this.calls = new Set(); // PooledCalls started and not yet ended
    this.drained = null; // close's resolve, called when calls empties
    this.newChannel = () => {
      const ch = new grpc.Channel(target, credentials, { [LOCAL_SUBCHANNEL_POOL]: 1, ...channelOptions });
      ch.getConnectivityState(true); // start connecting
      return ch;
    };
    this.metrics = instruments(meterProvider);
    this.base = { 'rpclab.pool.target': target };
    this.slots = Array.from({ length: size }, (_, i) => new Slot(this.newChannel(), i, false, redialAfterMs, target));
    if (this.metrics) this.metrics.size.add(size, this.base);
  }

  /** The pool's channels now, in the order of their index. */
  get channels() {
    return this.slots.map((s) => s.channel);
  }

  /** The calls in flight on each channel now. */
  inflight() {
    return this.slots.map((s) => s.inflight);
  }

  /** Each channel's connectivity state now. */
  states() {
    return this.slots.map((s) => s.channel.getConnectivityState(false));
  }

  /**
   * Makes every channel connect and resolves when each is READY; rejects
   * with an Error naming the channels' states if one is not by deadline (a
   * Date or milliseconds since the epoch; Infinity: no bound).
   */
  connect(deadline) {
    if (this.closed) return Promise.reject(new Error(`rpclab pool: ${this.target}: connect on a closed pool`));
    return Promise.all(this.channels.map((ch) => channelReady(ch, deadline))).catch((err) => {
      const states = this.states().map((s) => ConnectivityState[s]).join(', ');
      throw new Error(`rpclab pool: ${this.target}: channels not all READY by the deadline: ${states} (${err.message})`);
    });
  }

  /**
   * Stops taking calls (createCall throws), lets those in flight finish for
   * up to grace milliseconds (default 5000; 0: none), cancels the rest
   * (CANCELLED), and closes every channel. Resolves when done; a second
   * close resolves at once. grpc-js's Client#close calls it with no
   * argument.
   */
  close({ grace = DEFAULT_GRACE_MS } = {}) {
    checkMs(grace, 'grace', true);
    if (this.closed) return Promise.resolve();
    this.closed = true;
    const finish = () => {
      for (const c of [...this.calls]) c.cancelWithStatus(grpc.status.CANCELLED, 'rpclab pool: closed');
      for (const s of this.slots) s.channel.close();
      if (this.metrics) this.metrics.size.add(-this.slots.length, this.base);
    };
    if (this.calls.size === 0 || grace === 0) {
      finish();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.drained = null;
        finish();
        resolve();
      }, grace);
      this.drained = () => {
        clearTimeout(timer);
        this.drained = null;
        finish();
        resolve();
      };
    });
  }

  // grpc-js Channel interface.

  getTarget() {
    return this.slots[0].channel.getTarget();
  }

  getConnectivityState(tryToConnect) {
    // Closed: SHUTDOWN without asking the channels, since grpc-js 1.14's
    // getConnectivityState(true) makes a closed channel connect again.
    if (this.closed) return ConnectivityState.SHUTDOWN;
    return aggregate(this.slots.map((s) => s.channel.getConnectivityState(tryToConnect)));
  }

  /**
   * Calls callback once the pool's state (see getConnectivityState) differs
   * from currentState, or with an Error at deadline; what Client#waitForReady
   * builds on.
   */
  watchConnectivityState(currentState, deadline, callback) {
    if (this.getConnectivityState(false) === ConnectivityState.SHUTDOWN) {
      throw new Error('Channel has been shut down'); // as grpc-js's own, which waitForReady expects
    }
    let done = false;
    let timer = null;
    const finish = (err) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      callback(err);
    };
    const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
    if (deadlineMs !== Infinity) {
      const wait = deadlineMs - Date.now();
      if (!(wait > 0)) {
        process.nextTick(finish, new Error('Deadline passed without connectivity state change'));
        return;
      }
      timer = setTimeout(() => finish(new Error('Deadline passed without connectivity state change')), wait);
    }
    // Each channel's watcher without a deadline of its own (so no timer
    // each), re-armed until the pool's state changes; the others' stale ones
    // go at their channel's next change.
    const arm = (ch) => {
      if (done) return;
      const state = ch.getConnectivityState(false);
      if (state === ConnectivityState.SHUTDOWN) return;
      ch.watchConnectivityState(state, Infinity, () => {
        if (done) return;
        if (this.getConnectivityState(false) !== currentState) finish();
        else arm(ch);
      });
    };
    if (this.getConnectivityState(false) !== currentState) {
      process.nextTick(finish);
      return;
    }
    for (const ch of this.channels) arm(ch);
  }

  getChannelzRef() {
    return this.slots[0].channel.getChannelzRef();
  }

  createCall(method, deadline, host, parentCall, propagateFlags) {
    if (this.closed) throw new Error('Channel has been shut down'); // grpc-js's own words
    const slot = this.acquire();
    return new PooledCall(this, slot, slot.channel.createCall(method, deadline, host, parentCall, propagateFlags));
  }

  /** Picks the slot for one call (redialling and growing first as due). */
  acquire() {
    const now = Date.now();
    const states = this.slots.map((s) => s.channel.getConnectivityState(false));
    this.slots.forEach((s, i) => this.note(s, states[i], now));
    if (this.max > this.size) this.shrink(now);
    let slots = this.slots;
    const start = this.next++;
    if (this.next >= Number.MAX_SAFE_INTEGER) this.next = 0;
    if (this.limit !== undefined && this.max > this.size) {
      const below = slots.filter((s) => s.inflight < this.limit);
      if (below.length === 0 && slots.length < this.max) return this.grow();
      if (below.length > 0) slots = below;
    }
    const st = slots.map((s) => s.channel.getConnectivityState(false));
    return slots[pick(this.policy, st, slots.map((s) => s.inflight), start)];
  }

  /** Follows a slot's TRANSIENT_FAILURE time; replaces its channel when due. */
  note(slot, state, now) {
    if (state !== ConnectivityState.TRANSIENT_FAILURE) {
      slot.tfSince = null;
      if (state === ConnectivityState.READY) slot.delay = this.redialAfterMs;
      return;
    }
    if (slot.tfSince === null) {
      slot.tfSince = now;
      return;
    }
    if (now - slot.tfSince < slot.delay) return;
    slot.channel.close();
    slot.channel = this.newChannel();
    slot.tfSince = null;
    slot.delay = Math.min(2 * slot.delay, MAX_REDIAL_AFTER_MS);
    this.redials++;
    if (this.metrics) this.metrics.redials.add(1, this.base);
  }

  grow() {
    const slot = new Slot(this.newChannel(), this.nextIndex++, true, this.redialAfterMs, this.target);
    this.slots.push(slot);
    this.resizes++;
    if (this.metrics) {
      this.metrics.size.add(1, this.base);
      this.metrics.resizes.add(1, { ...this.base, 'rpclab.pool.direction': 'grow' });
    }
    return slot;
  }

  shrink(now) {
    const idle = (s) => s.grown && s.inflight === 0 && now - s.idleSince >= this.idleTimeoutMs;
    const gone = this.slots.filter(idle);
    if (gone.length === 0) return;
    this.slots = this.slots.filter((s) => !idle(s));
    for (const s of gone) s.channel.close();
    this.resizes += gone.length;
    if (this.metrics) {
      this.metrics.size.add(-gone.length, this.base);
      this.metrics.resizes.add(gone.length, { ...this.base, 'rpclab.pool.direction': 'shrink' });
    }
  }

  started(call) {
    call.slot.inflight++;
    this.calls.add(call);
    if (this.metrics) {
      this.metrics.picks.add(1, call.slot.attrs);
      this.metrics.inflight.add(1, call.slot.attrs);
    }
  }

  ended(call) {
    const slot = call.slot;
    slot.inflight--;
    if (slot.inflight === 0) slot.idleSince = Date.now();
    this.calls.delete(call);
    if (this.metrics) this.metrics.inflight.add(-1, slot.attrs);
    if (this.calls.size === 0 && this.drained) this.drained();
  }
}

/** Resolves when ch is READY, rejects at deadline or when it shuts down. */
function channelReady(ch, deadline) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const state = ch.getConnectivityState(true);
      if (state === ConnectivityState.READY) return resolve();
      if (state === ConnectivityState.SHUTDOWN) return reject(new Error('channel shut down'));
      try {
        ch.watchConnectivityState(state, deadline, (err) => (err ? reject(err) : check()));
      } catch (err) {
        reject(err);
      }
    };
    check();
  });
}

/**
 * A channel's call, counted in flight on its channel from start until its
 * status arrives (grpc-js delivers exactly one status per started call,
 * cancellations and deadlines included).
 */
class PooledCall {
  constructor(pool, slot, call) {
    this.pool = pool;
    this.slot = slot;
    this.call = call;
  }

  start(metadata, listener) {
    const { pool } = this;
    pool.started(this);
    let ended = false;
    this.call.start(metadata, {
      onReceiveMetadata: (m) => listener.onReceiveMetadata(m),
      onReceiveMessage: (msg) => listener.onReceiveMessage(msg),
      onReceiveStatus: (status) => {
        if (!ended) {
          ended = true;
          pool.ended(this);
        }
        listener.onReceiveStatus(status);
      },
    });
  }

  cancelWithStatus(status, details) {
    this.call.cancelWithStatus(status, details);
  }

  getPeer() {
    return this.call.getPeer();
  }

  sendMessageWithContext(context, message) {
    this.call.sendMessageWithContext(context, message);
  }

  startRead() {
    this.call.startRead();
  }

  halfClose() {
    this.call.halfClose();
  }

  getCallNumber() {
    return this.call.getCallNumber();
  }

  setCredentials(credentials) {
    this.call.setCredentials(credentials);
  }

  getAuthContext() {
    return this.call.getAuthContext();
  }
}

module.exports = {
  ChannelPool,
  Policy,
  LOCAL_SUBCHANNEL_POOL,
  MAX_SIZE,
  DEFAULT_GRACE_MS,
  DEFAULT_REDIAL_AFTER_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  defaultSize,
  checkTarget,
  pick,
  candidates,
  choose,
  aggregate,
};
