// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Types of @rpclab/grpc-pool (index.js). The rules are docs/pool.md's.

import type { ChannelCredentials, ChannelInterface, ChannelOptions, connectivityState } from '@grpc/grpc-js';
import type { MeterProvider } from '@opentelemetry/api';

/** The largest size and maxConnections: 1024, as in all of rpclab's pools. */
export declare const MAX_SIZE: 1024;
/** Milliseconds close() lets calls in flight finish before it cancels them. */
export declare const DEFAULT_GRACE_MS: 5000;
/** Milliseconds a channel may stay in TRANSIENT_FAILURE before it is replaced. */
export declare const DEFAULT_REDIAL_AFTER_MS: 5000;
/** Milliseconds a channel added by growth may carry no call before it is retired. */
export declare const DEFAULT_IDLE_TIMEOUT_MS: 30000;
/** The channel option that gives each channel of the pool its own connection. */
export declare const LOCAL_SUBCHANNEL_POOL: 'grpc.use_local_subchannel_pool';

/** How the pool picks a channel for each call. */
export declare const Policy: {
  readonly ROUND_ROBIN: 'round-robin';
  readonly LEAST_LOADED: 'least-loaded';
};
export type Policy = (typeof Policy)[keyof typeof Policy];

export interface ChannelPoolOptions {
  /** The number of channels, 1..MAX_SIZE; default defaultSize(). */
  size?: number;
  /** 'round-robin' (the default) or 'least-loaded' (power of two choices). */
  policy?: Policy;
  /** Given to every channel, plus grpc.use_local_subchannel_pool = 1 unless set. */
  channelOptions?: ChannelOptions;
  /** Growth at the server's stream limit: on when above size; at most MAX_SIZE. */
  maxConnections?: number;
  /** The streams one connection carries before the pool grows (needed with maxConnections). */
  streamsPerConnection?: number;
  /** A grown channel idle this long is retired; default DEFAULT_IDLE_TIMEOUT_MS. */
  idleTimeoutMs?: number;
  /** A channel in TRANSIENT_FAILURE this long is replaced; default DEFAULT_REDIAL_AFTER_MS. */
  redialAfterMs?: number;
  /** Where the pool's metrics go; default the global one of @opentelemetry/api. */
  meterProvider?: MeterProvider;
}

export interface CloseOptions {
  /** Milliseconds calls in flight may finish before they are cancelled; default DEFAULT_GRACE_MS. */
  grace?: number;
}

/** Channels to one target, each with its own TCP connection, as one grpc-js Channel. */
export declare class ChannelPool implements ChannelInterface {
  constructor(target: string, credentials: ChannelCredentials, options?: ChannelPoolOptions);
  readonly target: string;
  readonly policy: Policy;
  readonly size: number;
  /** Channels replaced after TRANSIENT_FAILURE so far. */
  readonly redials: number;
  /** Channels added or retired by growth so far. */
  readonly resizes: number;
  /** The pool's channels now, in the order of their index. */
  readonly channels: ChannelInterface[];
  /** The calls in flight on each channel now. */
  inflight(): number[];
  /** Each channel's connectivity state now. */
  states(): connectivityState[];
  /** Resolves when every channel is READY; rejects at deadline. */
  connect(deadline: Date | number): Promise<void>;
  /** Drains for grace milliseconds, cancels the rest, closes every channel. */
  close(options?: CloseOptions): Promise<void>;
  getTarget(): string;
  getConnectivityState(tryToConnect: boolean): connectivityState;
  watchConnectivityState(currentState: connectivityState, deadline: Date | number, callback: (error?: Error) => void): void;
  getChannelzRef(): ReturnType<ChannelInterface['getChannelzRef']>;
  createCall(...args: Parameters<ChannelInterface['createCall']>): ReturnType<ChannelInterface['createCall']>;
}

/** The CPUs this process may use, clamped to 2..8. */
export declare function defaultSize(): number;
/** Throws a TypeError unless target is one gRPC can parse (docs/pool.md). */
export declare function checkTarget(target: string): void;
/** The channel index for the next call, given the channels' states and calls in flight. */
export declare function pick(
  policy: Policy,
  states: connectivityState[],
  inflight: number[],
  start: number,
  random?: () => number,
): number;
export declare function candidates(states: connectivityState[]): number[];
export declare function choose(policy: Policy, cands: number[], inflight: number[], start: number, random?: () => number): number;
export declare function aggregate(states: connectivityState[]): connectivityState;
