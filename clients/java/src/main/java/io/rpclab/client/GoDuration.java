// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import java.math.BigDecimal;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * picocli's converter for durations as Go's time.ParseDuration reads them ("1m0s", "1.5s",
 * "300ms"), in nanoseconds. java.time.Duration.parse reads ISO 8601 only (PT1.5S), and no
 * maintained Java library reads Go's form: this is the one small parser the client keeps.
 */
final class GoDuration implements ITypeConverter<Long> {
    private static final Pattern PART = Pattern.compile("([0-9]+\\.?[0-9]*|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)");
    private static final Map<String, Long> UNIT = Map.of(
            "ns",
            1L,
            "us",
            1_000L,
            "µs",
            1_000L,
            "μs",
            1_000L,
            "ms",
            1_000_000L,
            "s",
            1_000_000_000L,
            "m",
            60_000_000_000L,
            "h",
            3_600_000_000_000L);

    @Override
    public Long convert(String s) {
        String v = s.trim();
        boolean neg = v.startsWith("-");
        if (neg || v.startsWith("+")) {
            v = v.substring(1);
        }
        if (v.equals("0")) {
            return 0L;
        }
        Matcher m = PART.matcher(v);
        BigDecimal total = BigDecimal.ZERO;
        int at = 0;
        while (at < v.length() && m.find(at) && m.start() == at) {
            total = total.add(new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(UNIT.get(m.group(2)))));
            at = m.end();
        }
        if (v.isEmpty() || at < v.length()) {
            throw new TypeConversionException("invalid duration \"" + s + "\" (want e.g. 500ms, 2s, 1m)");
        }
        if (total.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new TypeConversionException("duration \"" + s + "\" is too long");
        }
        return neg ? -total.longValue() : total.longValue();
    }
}
