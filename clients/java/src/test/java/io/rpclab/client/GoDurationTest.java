// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class GoDurationTest {
    /** Durations as Go's time.ParseDuration reads them (the driver writes spec.Warmup.String()). */
    @Test
    void parsesAsGoDoes() throws Exception {
        Object[][] cases = {
            {"0", 0L},
            {"0s", 0L},
            {"-0", 0L},
            {"300ms", 300_000_000L},
            {"1m0s", 60_000_000_000L},
            {"1.5s", 1_500_000_000L},
            {"2h45m", 9_900_000_000_000L},
            {"1h2m3s4ms5us6ns", 3_723_004_005_006L},
            {"250us", 250_000L},
            {"250µs", 250_000L}, // U+00B5 micro sign, as Go's String() writes it
            {"250μs", 250_000L}, // U+03BC Greek mu
            {"7ns", 7L},
            {"1.000000001s", 1_000_000_001L},
            {".5s", 500_000_000L},
            {"1.s", 1_000_000_000L},
            {"-1.5s", -1_500_000_000L}, // negative: Flags rejects it per flag
            {"+2s", 2_000_000_000L},
            {" 2s ", 2_000_000_000L},
            {"2562047h47m16.854775807s", Long.MAX_VALUE},
        };
        for (Object[] c : cases) {
            String s = (String) c[0];
            assertEquals((long) c[1], new GoDuration().convert(s), "GoDuration.convert(\"" + s + "\")");
        }
    }

    @Test
    void rejectsWhatGoRejects() {
        String[] bad = {
            "",
            "-",
            "s",
            "5",
            "1x",
            "1..5s",
            ".s",
            "1h-1m",
            "1 s",
            "ms",
            "1sec",
            "1d",
            "3000000h",
            "2562047h47m16.854775808s"
        };
        for (String s : bad) {
            TypeConversionException e = assertThrows(
                    TypeConversionException.class,
                    () -> new GoDuration().convert(s),
                    "GoDuration.convert(\"" + s + "\") must fail");
            assertTrue(e.getMessage().contains("\"" + s + "\""), "the error quotes the value: " + e.getMessage());
        }
    }
}
