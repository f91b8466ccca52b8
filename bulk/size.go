// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"fmt"
	"strconv"
	"strings"
)

var units = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1},
}

// ParseBytes parses a byte count: an integer with an optional unit, binary
// (KiB, MiB, GiB, TiB) or decimal (kB, MB, GB, TB), as "64KiB" or "1GiB".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bulk: %q is not a byte count (e.g. 65536, 64KiB, 1GiB)", s)
	}
	if n != 0 && (n*mult/mult != n || n*mult < 0) {
		return 0, fmt.Errorf("bulk: %q overflows", s)
	}
	return n * mult, nil
}

// FormatBytes writes n with the largest binary unit that divides it
// ("64KiB", "1GiB", "1000B").
func FormatBytes(n int64) string {
	for _, u := range units[:4] {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
