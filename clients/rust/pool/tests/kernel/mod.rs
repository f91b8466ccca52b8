// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! Connections as the kernel sees them: this process's ESTABLISHED TCP
//! sockets (the socket inodes of /proc/self/fd matched against
//! /proc/net/tcp and tcp6). Shared by tests/pool.rs and the examples.

use std::collections::HashSet;

/// This process's ESTABLISHED TCP connections whose remote port is port.
/// A server in the same process has port as its local port, so its side
/// of each connection is not counted.
pub fn connections_to(port: u16) -> usize {
    let mut inodes = HashSet::new();
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        for fd in fds.flatten() {
            // A descriptor closed meanwhile has no link: skipped.
            if let Ok(link) = std::fs::read_link(fd.path()) {
                let link = link.to_string_lossy();
                if let Some(inode) = link.strip_prefix("socket:[").and_then(|l| l.strip_suffix(']')) {
                    inodes.insert(inode.to_string());
                }
            }
        }
    }
    let mut n = 0;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 || f[3] != "01" || !inodes.contains(f[9]) {
                continue;
            }
            let remote = f[2].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            if remote == Some(port) {
                n += 1;
            }
        }
    }
    n
}
