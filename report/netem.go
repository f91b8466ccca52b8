// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import "strconv"

// rateLabel writes a record's emulated bandwidth, bits per second, in the
// largest tc(8) unit that keeps the number short ("1gbit", "2.5mbit"), as
// rpclab's --rate flags take it.
func rateLabel(bps int64) string {
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if float64(bps) >= u.mult {
			return strconv.FormatFloat(float64(bps)/u.mult, 'g', -1, 64) + u.suffix
		}
	}
	return strconv.FormatInt(bps, 10) + "bit"
}
