// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// A pool of grpc-js channels to one target, each with its own TCP
// connection, behind grpc-js's Channel interface, so a client takes it as its
// one channel through the channelOverride option:
//
//   const pool = new ChannelPool(target, grpc.credentials.createInsecure(), { size: 4 });
//   const client = new FooClient(target, grpc.credentials.createInsecure(), { channelOverride: pool });
//
// Each call's createCall goes to the channel the policy picks, and the call
// stays there. See README.md.

'use strict';

const grpc = require('@grpc/grpc-js');

const ConnectivityState = grpc.connectivityState;

/**
 * Makes grpc-js keep a channel's subchannels in a pool of its own instead of
 * the process-wide one, where channels with identical options share one
 * subchannel (one TCP connection). With it each channel of the pool connects
 * on its own (clients/node/README.md, measured by the conformance suite).
 */
const LOCAL_SUBCHANNEL_POOL = 'grpc.use_local_subchannel_pool';

/** How the pool picks a channel for each call. */
const Policy = Object.freeze({
  /** The channels in turn. */
  ROUND_ROBIN: 'round-robin',
  /** The channel with the fewest calls in flight; ties in turn. */
  LEAST_LOADED: 'least-loaded',
});
const POLICIES = Object.values(Policy);

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
 * candidate (start is the pool's round-robin counter); LEAST_LOADED the one
 * with the fewest calls in flight, the first from the start-th on among
 * equals.
 */
function choose(policy, cands, inflight, start) {
  const n = cands.length;
  let best = cands[start % n];
  if (policy === Policy.ROUND_ROBIN) return best;
  for (let k = 1; k < n; k++) {
    const i = cands[(start + k) % n];
    if (inflight[i] < inflight[best]) best = i;
  }
  return best;
}

/** choose among the candidates of states: the pool's whole pick. */
function pick(policy, states, inflight, start) {
  return choose(policy, candidates(states), inflight, start);
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
  if (states.every((s) => s === ConnectivityState.SHUTDOWN)) return ConnectivityState.SHUTDOWN;
  return ConnectivityState.TRANSIENT_FAILURE;
}

function invalid(ErrorType, code, message) {
  const err = new ErrorType(`rpclab pool: ${message}`);
  err.code = code;
  return err;
}

/**
 * size grpc-js channels to target, each with its own TCP connection, behind
 * grpc-js's Channel interface (pass it as a client's channelOverride).
 * Construction does not wait for the target; the channels start connecting
 * at once, and connect() waits for them.
 *
 * options: size (required: the number of TCP connections), policy
 * (Policy.ROUND_ROBIN, the default, or Policy.LEAST_LOADED: their values
 * 'round-robin' and 'least-loaded'), channelOptions (given to every channel,
 * plus grpc.use_local_subchannel_pool = 1 unless they set it).
 *
 * Health: a channel that is CONNECTING, in TRANSIENT_FAILURE or SHUTDOWN is
 * skipped while another is READY or IDLE, so after a server restart calls go
 * to the channels that have reconnected, and IDLE ones reconnect on their
 * next call, without the caller doing anything.
 */
class ChannelPool {
  constructor(target, credentials, options = {}) {
    if (typeof target !== 'string' || target === '') {
      throw invalid(TypeError, 'ERR_INVALID_ARG_VALUE', `target must be a non-empty string, got ${JSON.stringify(target)}`);
    }
    if (options === null || typeof options !== 'object') {
      throw invalid(TypeError, 'ERR_INVALID_ARG_TYPE', `options must be an object, got ${String(options)}`);
    }
    const { size, policy = Policy.ROUND_ROBIN, channelOptions = {} } = options;
    if (typeof size !== 'number' || !Number.isInteger(size)) {
      throw invalid(TypeError, 'ERR_INVALID_ARG_TYPE', `size must be an integer, got ${typeof size === 'string' ? JSON.stringify(size) : String(size)}`);
    }
    if (size < 1) {
      throw invalid(RangeError, 'ERR_OUT_OF_RANGE', `size must be at least 1, got ${size}`);
    }
    if (!POLICIES.includes(policy)) {
      throw invalid(TypeError, 'ERR_INVALID_ARG_VALUE', `unknown policy ${JSON.stringify(policy)} (want ${POLICIES.map((p) => `"${p}"`).join(' or ')})`);
    }
    this.target = target;
    this.policy = policy;
    const opts = { [LOCAL_SUBCHANNEL_POOL]: 1, ...channelOptions };
    /** The pool's channels, in the order of their index. */
    this.channels = Array.from({ length: size }, () => new grpc.Channel(target, credentials, opts));
    this.inflightCounts = new Array(size).fill(0);
    this.next = 0;
    this.closed = false;
    for (const ch of this.channels) ch.getConnectivityState(true); // start connecting
  }

  /** The calls in flight on each channel now. */
  inflight() {
    return this.inflightCounts.slice();
  }

  /** Each channel's connectivity state now. */
  states() {
    return this.channels.map((ch) => ch.getConnectivityState(false));
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

  // grpc-js Channel interface.

  close() {
    this.closed = true;
    for (const ch of this.channels) ch.close();
  }

  getTarget() {
    return this.channels[0].getTarget();
  }

  getConnectivityState(tryToConnect) {
    // Closed: SHUTDOWN without asking the channels, since grpc-js 1.14's
    // getConnectivityState(true) makes a closed channel connect again.
    if (this.closed) return ConnectivityState.SHUTDOWN;
    return aggregate(this.channels.map((ch) => ch.getConnectivityState(tryToConnect)));
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
    return this.channels[0].getChannelzRef();
  }

  createCall(method, deadline, host, parentCall, propagateFlags) {
    if (this.closed) throw new Error('Channel has been shut down');
    const states = this.channels.map((ch) => ch.getConnectivityState(false));
    const i = pick(this.policy, states, this.inflightCounts, this.next++);
    if (this.next >= Number.MAX_SAFE_INTEGER) this.next = 0;
    return new PooledCall(this, i, this.channels[i].createCall(method, deadline, host, parentCall, propagateFlags));
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
  constructor(pool, index, call) {
    this.pool = pool;
    this.index = index;
    this.call = call;
  }

  start(metadata, listener) {
    const { pool, index } = this;
    pool.inflightCounts[index]++;
    let ended = false;
    this.call.start(metadata, {
      onReceiveMetadata: (m) => listener.onReceiveMetadata(m),
      onReceiveMessage: (msg) => listener.onReceiveMessage(msg),
      onReceiveStatus: (status) => {
        if (!ended) {
          ended = true;
          pool.inflightCounts[index]--;
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

module.exports = { ChannelPool, Policy, LOCAL_SUBCHANNEL_POOL, pick, candidates, choose, aggregate };
