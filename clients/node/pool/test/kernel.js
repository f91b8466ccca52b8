// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Connections as the kernel has them, for the pool's tests and the scripts
// clients/conformance runs (streamlimit.js, restart.js).

'use strict';

const fs = require('node:fs');

/** This process's ESTABLISHED TCP connections to port (/proc/self/fd and /proc/net/tcp). */
function connectionsTo(port) {
  const inodes = new Set();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  let n = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length >= 10 && f[3] === '01' && parseInt(f[2].split(':')[1], 16) === port && inodes.has(f[9])) n++;
    }
  }
  return n;
}

module.exports = { connectionsTo };
