// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import java.math.BigDecimal;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses durations written as Go's time.ParseDuration reads them ("1m0s", "1.5s", "300ms"). */
final class GoDuration {
  private static final Pattern PART = Pattern.compile("([0-9]*\\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)");

  private GoDuration() {}

  /** Returns the duration in nanoseconds. */
  static long parse(String flag, String s) throws Flags.UsageException {
    String v = s.trim();
    boolean neg = false;
    if (v.startsWith("-") || v.startsWith("+")) {
      neg = v.startsWith("-");
      v = v.substring(1);
    }
    if (v.equals("0")) return 0;
    if (v.isEmpty()) throw new Flags.UsageException(flag, "invalid duration \"" + s + "\"");
    Matcher m = PART.matcher(v);
    int at = 0;
    BigDecimal total = BigDecimal.ZERO;
    while (at < v.length()) {
      if (!m.find(at) || m.start() != at || m.group(1).isEmpty() || m.group(1).equals(".")) {
        throw new Flags.UsageException(flag, "invalid duration \"" + s + "\" (want e.g. 500ms, 2s, 1m)");
      }
      long unit;
      switch (m.group(2)) {
        case "ns":
          unit = 1L;
          break;
        case "us":
        case "µs":
        case "μs":
          unit = 1_000L;
          break;
        case "ms":
          unit = 1_000_000L;
          break;
        case "s":
          unit = 1_000_000_000L;
          break;
        case "m":
          unit = 60_000_000_000L;
          break;
        default:
          unit = 3_600_000_000_000L;
      }
      total = total.add(new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unit)));
      at = m.end();
    }
    if (total.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new Flags.UsageException(flag, "duration \"" + s + "\" is too long");
    }
    long ns = total.longValue();
    return neg ? -ns : ns;
  }
}
