// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Type-checked by tsc (test/types.test.js): index.d.ts as a TypeScript user
// sees it, with grpc-js's own types.

import * as grpc from '@grpc/grpc-js';
import { ChannelPool, MAX_SIZE, Policy, defaultSize, type ChannelPoolOptions } from '@rpclab/grpc-pool';

const options: ChannelPoolOptions = { size: Math.min(defaultSize(), MAX_SIZE), policy: Policy.LEAST_LOADED };
const pool = new ChannelPool('127.0.0.1:1', grpc.credentials.createInsecure(), options);
const asChannel: grpc.ChannelInterface = pool;
const client = new grpc.Client('127.0.0.1:1', grpc.credentials.createInsecure(), { channelOverride: pool });
const counts: number[] = pool.inflight();
const state: grpc.connectivityState = pool.getConnectivityState(false);
const done: Promise<void> = pool.close({ grace: 0 });
void [asChannel, client, counts, state, done];

// @ts-expect-error: the credentials are required.
new ChannelPool('127.0.0.1:1');
// @ts-expect-error: an unknown policy.
new ChannelPool('127.0.0.1:1', grpc.credentials.createInsecure(), { policy: 'fastest' });
