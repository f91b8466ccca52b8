// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Locale;
import java.util.zip.Deflater;
import org.HdrHistogram.Histogram;

/** One step's result record (docs/results.md, docs/result.schema.json), written as one JSON line. */
final class Record {
  /** Status code names as the schema spells them (grpc-go's codes.Code.String), by code value. */
  static final String[] CODE_NAMES = {
    "OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
    "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
    "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated",
  };

  private final Flags f;
  private final Env env;
  private final String rpc;
  private final Flags.Conn conn;
  private final int inflight;

  String status = "ok";
  String error = "";
  Instant startedAt = Instant.now();
  /** The step could not connect: the steps after it are not run. */
  boolean unreachable;

  private long requests;
  private long ok;
  private long[] byCode = new long[Worker.CODES];
  private long durationNs;
  private double throughput;
  private long min;
  private double mean;
  private long p50;
  private long p90;
  private long p99;
  private long p999;
  private long p100;
  private String hdr = "";
  private long cpuNs;
  private double cpuPerRpc;

  Record(Flags f, Env env, String rpc, Flags.Conn conn, int inflight) {
    this.f = f;
    this.env = env;
    this.rpc = rpc;
    this.conn = conn;
    this.inflight = inflight;
  }

  void fail(String why) {
    status = "failed";
    error = why;
  }

  void fill(Histogram h, long[] codes, long elapsedNs, long cpu) {
    byCode = codes;
    requests = 0;
    for (long n : codes) {
      requests += n;
    }
    ok = codes[0];
    durationNs = elapsedNs;
    throughput = elapsedNs > 0 ? ok / (elapsedNs / 1e9) : 0;
    if (h.getTotalCount() > 0) {
      min = h.getMinValue();
      mean = h.getMean();
      p50 = h.getValueAtPercentile(50);
      p90 = h.getValueAtPercentile(90);
      p99 = h.getValueAtPercentile(99);
      p999 = h.getValueAtPercentile(99.9);
      p100 = h.getMaxValue();
    }
    hdr = encode(h);
    cpuNs = cpu;
    cpuPerRpc = requests > 0 ? (double) cpu / requests : 0;
    if (ok == 0) {
      fail(requests == 0 ? "no RPC completed in the interval" : "every RPC failed (" + requests + ")");
    }
  }

  /** The histogram in HdrHistogram's compressed V2 form, base64 ("HISTFAAA..."). */
  static String encode(Histogram h) {
    ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
    int n = h.encodeIntoCompressedByteBuffer(buf, Deflater.DEFAULT_COMPRESSION);
    byte[] b = new byte[n];
    buf.rewind();
    buf.get(b);
    return Base64.getEncoder().encodeToString(b);
  }

  String summary() {
    if (!status.equals("ok")) {
      return status + ": " + error;
    }
    return String.format(Locale.ROOT, "%.0f rps, p99 %.1f µs, cpu %.1f µs/rpc", throughput, p99 / 1e3,
        cpuPerRpc / 1e3);
  }

  String toJson() {
    StringBuilder b = new StringBuilder(512 + hdr.length());
    b.append("{\"schema_version\":1,\"kind\":\"ping\",\"status\":").append(str(status));
    if (!error.isEmpty()) {
      b.append(",\"error\":").append(str(error));
    }
    b.append(",\"started_at\":").append(str(rfc3339(startedAt)));
    b.append(",\"spec\":{\"target\":").append(str(f.target))
        .append(",\"rpc\":").append(str(rpc))
        .append(",\"conn_mode\":").append(str(conn.kind()))
        .append(",\"conns_requested\":").append(conn.conns(inflight));
    if (conn.kind().equals("pool")) {
      b.append(",\"pick\":\"round-robin\"");
    }
    b.append(",\"inflight\":").append(inflight)
        .append(",\"payload_bytes\":").append(f.payload)
        .append(",\"warmup_ns\":").append(f.warmupNs)
        .append(",\"interval_ns\":").append(f.intervalNs)
        .append(",\"load_model\":\"closed\"}");
    b.append(",\"env\":").append(env.toJson());
    b.append(",\"requests\":").append(requests).append(",\"errors\":{");
    boolean first = true;
    for (int c = 1; c < byCode.length; c++) {
      if (byCode[c] > 0) {
        b.append(first ? "" : ",").append(str(CODE_NAMES[c])).append(':').append(byCode[c]);
        first = false;
      }
    }
    b.append("},\"duration_ns\":").append(durationNs)
        .append(",\"throughput_rps\":").append(num(throughput))
        .append(",\"latency\":{\"min_ns\":").append(min)
        .append(",\"mean_ns\":").append(num(mean))
        .append(",\"p50_ns\":").append(p50)
        .append(",\"p90_ns\":").append(p90)
        .append(",\"p99_ns\":").append(p99)
        .append(",\"p999_ns\":").append(p999)
        .append(",\"p100_ns\":").append(p100)
        .append("},\"histogram_hdr\":").append(str(hdr))
        .append(",\"conns_observed\":-1")
        .append(",\"client_cpu_ns\":").append(cpuNs)
        .append(",\"client_cpu_ns_per_rpc\":").append(num(cpuPerRpc))
        .append('}');
    return b.toString();
  }

  /** RFC 3339 in UTC with nanoseconds, always with a fraction (Instant.toString drops a zero one). */
  private static final DateTimeFormatter RFC3339 =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

  static String rfc3339(Instant t) {
    return RFC3339.format(t);
  }

  static String num(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "0";
    }
    return String.format(Locale.ROOT, "%.3f", v);
  }

  static String str(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          b.append("\\\"");
          break;
        case '\\':
          b.append("\\\\");
          break;
        case '\n':
          b.append("\\n");
          break;
        case '\r':
          b.append("\\r");
          break;
        case '\t':
          b.append("\\t");
          break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }
}
