// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Run with: node --test clients/node/test/*.test.js  (after clients/node/build.sh)

'use strict';

const assert = require('node:assert/strict');
const net = require('node:net');
const test = require('node:test');

const { establishedTo, remoteKey } = require('../src/sockets');

test('remoteKey spells addresses as /proc/net/tcp{,6} do', () => {
  assert.deepEqual(remoteKey('127.0.0.1:1234'), {
    portHex: '04D2',
    v4: '0100007F',
    v6: '0000000000000000FFFF00000100007F',
    anyHost: false,
  });
  assert.equal(remoteKey('[::1]:80').v6, '00000000000000000000000001000000');
  assert.equal(remoteKey('localhost:80').anyHost, true);
  assert.equal(remoteKey('nohost'), null);
  assert.equal(remoteKey('h:99999'), null);
});

test('establishedTo counts this process connections to a loopback server', { skip: process.platform !== 'linux' }, async () => {
  const srv = net.createServer((s) => s.on('error', () => {}));
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const target = `127.0.0.1:${srv.address().port}`;
  try {
    assert.equal(establishedTo(target), 0);
    const socks = [];
    for (let i = 0; i < 3; i++) {
      socks.push(await new Promise((resolve) => { const c = net.connect(srv.address().port, '127.0.0.1', () => resolve(c)); }));
    }
    assert.equal(establishedTo(target), 3);
    for (const c of socks) c.destroy();
    while (establishedTo(target) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  } finally {
    srv.close();
  }
});
