// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Counts this process's established TCP connections to a target, from
// /proc/self/fd and /proc/self/net/tcp{,6} (as `ss -tp` and rpclab's
// procstat count them). main.js uses it at the end of a step to wait until
// the step's connections are really closed: grpc-js closes a channel's
// HTTP/2 sessions gracefully and asynchronously, and on a busy CPU an old
// connection could otherwise still be open in the next step's interval.

'use strict';

const fs = require('node:fs');
const net = require('node:net');

/** The remote address and port of host:port as /proc/net/tcp{,6} write them (null address: any). */
function remoteKey(target) {
  const i = target.lastIndexOf(':');
  if (i < 0) return null;
  const host = target.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(target.slice(i + 1));
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return null;
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  let v4 = null;
  let v6 = null;
  if (net.isIPv4(host)) {
    // Little-endian 32-bit word; also as an IPv4-mapped IPv6 address.
    const b = host.split('.').map(Number);
    v4 = b.map((x) => x.toString(16).toUpperCase().padStart(2, '0')).reverse().join('');
    v6 = `0000000000000000FFFF0000${v4}`;
  } else if (net.isIPv6(host)) {
    v6 = ipv6Hex(host);
  }
  return { portHex, v4, v6, anyHost: v4 === null && v6 === null };
}

/** An IPv6 address as /proc/net/tcp6 writes it: four little-endian 32-bit words. */
function ipv6Hex(addr) {
  let [head, tail = ''] = addr.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = addr.includes('::') ? [...h, ...new Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const bytes = [];
  for (const g of groups) {
    const v = parseInt(g || '0', 16);
    bytes.push(v >> 8, v & 0xff);
  }
  let out = '';
  for (let w = 0; w < 4; w++) {
    out += bytes
      .slice(w * 4, w * 4 + 4)
      .reverse()
      .map((x) => x.toString(16).toUpperCase().padStart(2, '0'))
      .join('');
  }
  return out;
}

/**
 * The established connections of this process to target, or -1 when they
 * cannot be read (not Linux, or an unparsable target).
 */
function establishedTo(target) {
  const key = remoteKey(target);
  if (key === null) return -1;
  let inodes;
  try {
    inodes = new Set();
    for (const fd of fs.readdirSync('/proc/self/fd')) {
      let link;
      try {
        link = fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        continue; // closed meanwhile
      }
      if (link.startsWith('socket:[')) inodes.add(link.slice(8, -1));
    }
  } catch {
    return -1;
  }
  let n = 0;
  let read = false;
  for (const [file, want] of [
    ['/proc/self/net/tcp', key.v4],
    ['/proc/self/net/tcp6', key.v6],
  ]) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    read = true;
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '01') continue; // 01: ESTABLISHED
      const [addr, port] = f[2].split(':');
      if (port !== key.portHex || !inodes.has(f[9])) continue;
      if (key.anyHost || addr === want) n++;
    }
  }
  return read ? n : -1;
}

module.exports = { establishedTo, remoteKey };
