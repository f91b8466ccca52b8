// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
// The README's example: 100 calls through a pool of 4 channels to the target
// in argv[2] (rpclab serve), with grpc.testing's protos beside it.
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { ChannelPool } = require('@rpclab/grpc-pool');

const { BenchmarkService } = grpc.loadPackageDefinition(protoLoader.loadSync(`${__dirname}/benchmark_service.proto`)).grpc.testing;
const creds = grpc.credentials.createInsecure();
const pool = new ChannelPool(process.argv[2], creds, { size: 4 });
const client = new BenchmarkService(process.argv[2], creds, { channelOverride: pool });
(async () => {
  for (let i = 0; i < 100; i++) await new Promise((ok, fail) => client.UnaryCall({ response_size: 1 }, (e) => (e ? fail(e) : ok())));
  console.log(`100 calls over ${pool.channels.length} channels, in flight now: ${pool.inflight()}`);
  await pool.close();
})();
