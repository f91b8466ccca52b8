// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Growth at the server's stream limit against a real server: 16 calls in
// flight through a pool of size 1, with growth on (maxConnections 8,
// streamsPerConnection 4) and off; for each, the connections to the server
// as the kernel has them while the 16 run, and the calls per second over a
// fixed interval. Prints one JSON line; clients/conformance runs it against
// `rpclab serve --max-concurrent-streams 4 --delay 2ms`.
//
//   node test/streamlimit.js 127.0.0.1:PORT [seconds]

'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { ChannelPool } = require('..');
const { connectionsTo } = require('./kernel');

const INFLIGHT = 16;
const def = protoLoader.loadSync('grpc/testing/benchmark_service.proto', {
  includeDirs: [path.resolve(__dirname, '..', '..', '..', '..', 'proto')],
  keepCase: true,
});
const { BenchmarkService } = grpc.loadPackageDefinition(def).grpc.testing;

async function run(target, seconds, growth) {
  const port = Number(target.split(':').pop());
  const creds = grpc.credentials.createInsecure();
  const pool = new ChannelPool(target, creds, { size: 1, ...growth });
  const client = new BenchmarkService(target, creds, { channelOverride: pool });
  let done = 0;
  let stop = false;
  let counted;
  const warm = new Promise((resolve) => (counted = resolve));
  const worker = async () => {
    while (!stop) {
      await new Promise((ok, fail) => client.UnaryCall({}, { deadline: Date.now() + 30000 }, (e) => (e ? fail(e) : ok())));
      if (++done === 400) counted();
    }
  };
  const workers = Array.from({ length: INFLIGHT }, worker);
  await warm;
  const conns = connectionsTo(port);
  const n0 = done;
  const t0 = process.hrtime.bigint();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000)); // the measured interval
  const rps = (done - n0) / (Number(process.hrtime.bigint() - t0) / 1e9);
  stop = true;
  await Promise.all(workers);
  const channels = pool.channels.length;
  await pool.close();
  return { conns, channels, rps: Math.round(rps), resizes: pool.resizes };
}

(async () => {
  const [target, secs = '2'] = process.argv.slice(2);
  const on = await run(target, Number(secs), { maxConnections: 8, streamsPerConnection: 4 });
  const off = await run(target, Number(secs), {});
  console.log(JSON.stringify({ on, off, ratio: Math.round((on.rps / Math.max(off.rps, 1)) * 100) / 100 }));
})();
