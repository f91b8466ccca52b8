// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// A server killed and restarted under load: 4 loops of unary calls through a
// pool of 3 (least-loaded) to argv[2]. Prints "running" after 200 calls,
// then waits for a line on stdin (the server has been killed and started
// again on the same port), runs until 200 more calls succeed, and prints one
// JSON line: the calls that succeeded, the failures by code, and the
// connections to the server as the kernel has them once the pool is
// connected again. clients/conformance drives it against `rpclab serve`.
//
//   node test/restart.js 127.0.0.1:PORT

'use strict';

const path = require('node:path');
const readline = require('node:readline');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { ChannelPool } = require('..');
const { connectionsTo } = require('./kernel');

const def = protoLoader.loadSync('grpc/testing/benchmark_service.proto', {
  includeDirs: [path.resolve(__dirname, '..', '..', '..', '..', 'proto')],
  keepCase: true,
});
const { BenchmarkService } = grpc.loadPackageDefinition(def).grpc.testing;

(async () => {
  const target = process.argv[2];
  const port = Number(target.split(':').pop());
  const creds = grpc.credentials.createInsecure();
  const pool = new ChannelPool(target, creds, { size: 3, policy: 'least-loaded' });
  const client = new BenchmarkService(target, creds, { channelOverride: pool });
  let ok = 0;
  const failed = {};
  let stop = false;
  let waiter = null;
  const loop = async () => {
    while (!stop) {
      try {
        await new Promise((res, rej) => client.UnaryCall({}, { deadline: Date.now() + 10000 }, (e) => (e ? rej(e) : res())));
        ok++;
        if (waiter && ok >= waiter.n) waiter.resolve();
      } catch (e) {
        const name = grpc.status[e.code];
        failed[name] = (failed[name] || 0) + 1;
        await new Promise(setImmediate); // fails fast while no server listens: let I/O run
      }
    }
  };
  const atLeast = (n) => new Promise((resolve) => (waiter = { n, resolve }));
  const loops = Array.from({ length: 4 }, loop);
  await atLeast(200);
  console.log('running');
  const rl = readline.createInterface({ input: process.stdin });
  await new Promise((resolve) => rl.once('line', resolve));
  rl.close();
  let timer;
  const recovered = await Promise.race([
    atLeast(ok + 200).then(() => true),
    new Promise((resolve) => (timer = setTimeout(() => resolve(false), 60000))),
  ]);
  clearTimeout(timer);
  stop = true;
  await Promise.all(loops);
  await pool.connect(Date.now() + 30000);
  console.log(JSON.stringify({ ok, failed, recovered, conns: connectionsTo(port) }));
  await pool.close();
})();
