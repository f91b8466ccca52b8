// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteUnits are the units ParseBytes reads: FormatBytes's binary ones and
// the decimal ones, longest suffix first.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1},
}

// ParseBytes parses a byte count, the one parser of every byte flag
// (sweep's --payload, bulk's sizes, flow's payloads, netem's and serve's
// bounds): an integer from 0 up with an optional unit, binary (KiB, MiB,
// GiB, TiB) or decimal (kB, MB, GB, TB), as "64KiB" or "1GiB"; FormatBytes
// writes what it reads. Its errors wrap ErrBadBytes and name the value and
// what was wrong with it (not a number, negative, above the largest int64
// byte count).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) && strings.HasPrefix(t, "-"):
		return 0, fmt.Errorf("%w: %q is negative (a byte count is 0 or more)", ErrBadBytes, s)
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%w: %q is above the largest byte count, %d (8 EiB)", ErrBadBytes, s, int64(math.MaxInt64))
	case err != nil:
		return 0, fmt.Errorf("%w: %q (want an integer and a unit, e.g. 65536, 64KiB, 1GiB, 10MB)", ErrBadBytes, s)
	case n < 0:
		return 0, fmt.Errorf("%w: %q is negative (a byte count is 0 or more)", ErrBadBytes, s)
	case n > math.MaxInt64/mult:
		return 0, fmt.Errorf("%w: %q is above the largest byte count, %d (8 EiB)", ErrBadBytes, s, int64(math.MaxInt64))
	}
	return n * mult, nil
}
