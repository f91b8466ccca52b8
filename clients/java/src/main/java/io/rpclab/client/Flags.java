// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The flags of docs/clients.md, parsed and checked as rpclab's own sweep checks them. */
final class Flags {
  /** A bad flag: main prints it and exits with code 2. */
  static final class UsageException extends Exception {
    UsageException(String flag, String msg) {
      super(flag + ": " + msg);
    }
  }

  /** One connection layout: shared, per-worker or pool:N. */
  record Conn(String kind, int n) {
    int conns(int inflight) {
      switch (kind) {
        case "shared":
          return 1;
        case "per-worker":
          return inflight;
        default:
          return n;
      }
    }
  }

  static final int MAX_INFLIGHT = 20000;
  static final int MAX_PAYLOAD = (4 << 20) - 64;

  String target = "";
  List<Integer> inflight = new ArrayList<>();
  List<Conn> conns = new ArrayList<>();
  List<String> rpcs = new ArrayList<>(List.of("unary"));
  int payload;
  long warmupNs = 1_000_000_000L;
  long intervalNs = 3_000_000_000L;
  long dialTimeoutNs = 5_000_000_000L;
  long rpcTimeoutNs;
  /** Unrecorded calls before the first step, so the JIT has compiled the RPC path. */
  long jitWarmupNs = 10_000_000_000L;
  /** "blocking": a thread per worker in a blocking unary call; "async": callbacks chain the calls. */
  String stub = "blocking";
  String out = "";

  /** A copy whose scalar settings may be changed; the lists are shared. */
  Flags copy() {
    Flags c = new Flags();
    c.target = target;
    c.inflight = inflight;
    c.conns = conns;
    c.rpcs = rpcs;
    c.payload = payload;
    c.warmupNs = warmupNs;
    c.intervalNs = intervalNs;
    c.dialTimeoutNs = dialTimeoutNs;
    c.rpcTimeoutNs = rpcTimeoutNs;
    c.jitWarmupNs = jitWarmupNs;
    c.stub = stub;
    c.out = out;
    return c;
  }

  static Flags parse(String[] args) throws UsageException {
    return parse(args, System.getenv());
  }

  /** Parses args, with env standing for the process environment ($RPCLAB_JAVA_STUB, $RPCLAB_JAVA_JIT_WARMUP). */
  static Flags parse(String[] args, Map<String, String> env) throws UsageException {
    Flags f = new Flags();
    String inflightList = null;
    Integer min = null;
    Integer max = null;
    Integer step = null;
    String connList = "shared,per-worker";
    String stubEnv = env.get("RPCLAB_JAVA_STUB");
    if (stubEnv != null && !stubEnv.isBlank()) {
      f.stub = stubEnv.trim();
    }
    String jitEnv = env.get("RPCLAB_JAVA_JIT_WARMUP");
    if (jitEnv != null && !jitEnv.isBlank()) {
      f.jitWarmupNs = GoDuration.parse("RPCLAB_JAVA_JIT_WARMUP", jitEnv);
    }
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (!a.startsWith("--") && !a.startsWith("-")) {
        throw new UsageException(a, "unexpected argument (flags only, see --help)");
      }
      String name = a.replaceFirst("^--?", "");
      String value;
      int eq = name.indexOf('=');
      if (name.equals("help") || name.equals("h")) {
        throw new UsageException("--help", usage());
      }
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else {
        if (i + 1 >= args.length) {
          throw new UsageException("--" + name, "needs a value");
        }
        value = args[++i];
      }
      String flag = "--" + name;
      switch (name) {
        case "target":
          f.target = value.trim();
          break;
        case "inflight":
          inflightList = value;
          break;
        case "min-inflight":
          min = integer(flag, value);
          break;
        case "max-inflight":
          max = integer(flag, value);
          break;
        case "step":
          step = integer(flag, value);
          break;
        case "conn":
          connList = value;
          break;
        case "rpc":
          f.rpcs = list(flag, value);
          break;
        case "payload":
          f.payload = integer(flag, value);
          break;
        case "warmup":
          f.warmupNs = GoDuration.parse(flag, value);
          break;
        case "interval":
          f.intervalNs = GoDuration.parse(flag, value);
          break;
        case "dial-timeout":
          f.dialTimeoutNs = GoDuration.parse(flag, value);
          break;
        case "rpc-timeout":
          f.rpcTimeoutNs = GoDuration.parse(flag, value);
          break;
        case "stub":
          f.stub = value.trim();
          break;
        case "jit-warmup":
          f.jitWarmupNs = GoDuration.parse(flag, value);
          break;
        case "out":
        case "o":
          f.out = value;
          break;
        default:
          throw new UsageException(flag, "unknown flag");
      }
    }
    if (f.target.isEmpty()) {
      throw new UsageException("--target", "required (HOST:PORT)");
    }
    checkTarget(f.target);
    if (inflightList != null && (min != null || max != null || step != null)) {
      throw new UsageException("--inflight", "give a list or --min-inflight/--max-inflight, not both");
    }
    if (inflightList != null) {
      for (String s : list("--inflight", inflightList)) {
        f.inflight.add(integer("--inflight", s));
      }
    } else if (min != null || max != null) {
      // As rpclab sweep: the range needs its top; its bottom defaults to 1.
      if (max == null) throw new UsageException("--min-inflight", "needs --max-inflight");
      int lo = min == null ? 1 : min;
      int hi = max;
      int st = step == null ? 1 : step;
      if (lo < 1) throw new UsageException("--min-inflight", "must be at least 1, got " + lo);
      if (hi < lo) throw new UsageException("--max-inflight", hi + " is below --min-inflight " + lo);
      if (st < 1) throw new UsageException("--step", "must be at least 1, got " + st);
      if (hi > MAX_INFLIGHT) throw new UsageException("--max-inflight", hi + " is above " + MAX_INFLIGHT);
      for (int n = lo; n <= hi; n += st) f.inflight.add(n);
    } else if (step != null) {
      throw new UsageException("--step", "needs --max-inflight (it is the step of the --min-inflight..--max-inflight range)");
    } else {
      f.inflight.addAll(List.of(1, 2, 4, 8, 16, 32));
    }
    for (int n : f.inflight) {
      if (n < 1 || n > MAX_INFLIGHT) {
        throw new UsageException("--inflight", n + " is outside 1.." + MAX_INFLIGHT);
      }
    }
    for (String c : list("--conn", connList)) {
      f.conns.add(conn(c));
    }
    for (String r : f.rpcs) {
      if (!r.equals("unary") && !r.equals("streaming")) {
        throw new UsageException("--rpc", "unknown RPC kind \"" + r + "\" (want unary or streaming)");
      }
    }
    if (f.payload < 0 || f.payload > MAX_PAYLOAD) {
      throw new UsageException("--payload", f.payload + " is outside 0.." + MAX_PAYLOAD + " bytes (gRPC's default 4 MiB message limit)");
    }
    if (f.warmupNs < 0) throw new UsageException("--warmup", "negative duration");
    if (f.intervalNs <= 0) throw new UsageException("--interval", "must be positive");
    if (f.dialTimeoutNs <= 0) throw new UsageException("--dial-timeout", "must be positive");
    if (f.rpcTimeoutNs < 0) throw new UsageException("--rpc-timeout", "negative duration");
    if (!f.stub.equals("blocking") && !f.stub.equals("async")) {
      throw new UsageException("--stub", "unknown stub \"" + f.stub + "\" (want blocking or async; also $RPCLAB_JAVA_STUB)");
    }
    if (f.jitWarmupNs < 0) throw new UsageException("--jit-warmup", "negative duration");
    return f;
  }

  /**
   * Checks a HOST:PORT target up front: grpc-java would otherwise log an exception from its resolver
   * thread and the step would wait out --dial-timeout. A URI target (dns:///..., unix:...) is left to
   * grpc-java.
   */
  static void checkTarget(String t) throws UsageException {
    if (t.matches("^[a-z][a-z0-9+.-]*:.*") && (t.contains(":/") || t.startsWith("unix:"))) {
      return;
    }
    int c = t.lastIndexOf(':');
    if (c < 0) {
      throw new UsageException("--target", "\"" + t + "\" has no port (want HOST:PORT)");
    }
    String host = t.substring(0, c);
    if (host.isEmpty()) {
      throw new UsageException("--target", "\"" + t + "\" has no host (want HOST:PORT)");
    }
    if (host.contains(":") && !(host.startsWith("[") && host.endsWith("]"))) {
      throw new UsageException("--target", "\"" + t + "\": write an IPv6 address in brackets ([::1]:PORT)");
    }
    int port;
    try {
      port = Integer.parseInt(t.substring(c + 1));
    } catch (NumberFormatException e) {
      port = -1;
    }
    if (port < 1 || port > 65535) {
      throw new UsageException("--target", "\"" + t + "\": port \"" + t.substring(c + 1) + "\" is not in 1..65535");
    }
  }

  static Conn conn(String s) throws UsageException {
    String[] p = s.trim().split(":", -1);
    switch (p[0]) {
      case "shared":
      case "per-worker":
        if (p.length != 1) throw new UsageException("--conn", "\"" + p[0] + "\" takes no size");
        return new Conn(p[0], 0);
      case "pool":
        if (p.length != 2) throw new UsageException("--conn", "\"" + s + "\": want pool:N (round-robin per RPC)");
        int n;
        try {
          n = Integer.parseInt(p[1]);
        } catch (NumberFormatException e) {
          n = 0;
        }
        if (n < 1) throw new UsageException("--conn", "\"" + s + "\": pool size must be an integer of at least 1");
        return new Conn("pool", n);
      case "channel-per-worker":
      case "local-pool":
      case "distinct-args":
        throw new UsageException("--conn", "\"" + p[0] + "\" is a C-core layout; grpc-java opens a connection per"
            + " channel, so use per-worker (want shared, per-worker or pool:N)");
      default:
        throw new UsageException("--conn", "unknown connection mode \"" + s + "\" (want shared, per-worker or pool:N)");
    }
  }

  private static List<String> list(String flag, String v) throws UsageException {
    List<String> out = new ArrayList<>();
    for (String s : v.split(",", -1)) {
      s = s.trim();
      if (s.isEmpty()) throw new UsageException(flag, "empty item in \"" + v + "\"");
      out.add(s);
    }
    return out;
  }

  private static int integer(String flag, String v) throws UsageException {
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new UsageException(flag, "\"" + v + "\" is not an integer");
    }
  }

  static String usage() {
    return "usage: rpclab-client --target HOST:PORT [--inflight 1,2,4 | --min-inflight A --max-inflight B [--step S]]\n"
        + "  [--conn shared,per-worker,pool:N] [--rpc unary,streaming] [--payload BYTES]\n"
        + "  [--warmup DUR] [--interval DUR] [--dial-timeout DUR] [--rpc-timeout DUR] [--out FILE]\n"
        + "  [--stub blocking|async (unary: a blocking call per worker thread, or calls chained in"
        + " callbacks on a direct-executor channel; default $RPCLAB_JAVA_STUB or blocking)]\n"
        + "  [--jit-warmup DUR (default 10s, or $RPCLAB_JAVA_JIT_WARMUP): unrecorded calls before the first step]\n"
        + "durations in Go syntax (500ms, 2s, 1m); see docs/clients.md";
  }
}
