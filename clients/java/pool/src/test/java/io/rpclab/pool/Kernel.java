// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** This process's TCP connections as the kernel has them: /proc/self/fd's sockets in /proc/net/tcp*. */
final class Kernel {
    private Kernel() {}

    /**
     * This process's ESTABLISHED connections to port (its remote port): an in-process server's own
     * sockets have port as their local port and are not counted.
     */
    static int connectionsTo(int port) {
        try {
            Set<String> inodes = new HashSet<>();
            try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
                for (Path fd : fds) {
                    String link;
                    try {
                        link = Files.readSymbolicLink(fd).toString();
                    } catch (IOException e) {
                        continue; // closed meanwhile
                    }
                    if (link.startsWith("socket:[")) {
                        inodes.add(link.substring("socket:[".length(), link.length() - 1));
                    }
                }
            }
            int n = 0;
            for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
                List<String> lines;
                try {
                    lines = Files.readAllLines(Path.of(table));
                } catch (NoSuchFileException e) {
                    continue;
                }
                for (String line : lines.subList(1, lines.size())) {
                    String[] f = line.trim().split("\\s+");
                    int remotePort = Integer.parseInt(f[2].substring(f[2].indexOf(':') + 1), 16);
                    if (f[3].equals("01") && remotePort == port && inodes.contains(f[9])) {
                        n++;
                    }
                }
            }
            return n;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
