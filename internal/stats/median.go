// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package stats

import "slices"

// Number is a value Median takes: an integer or a float.
type Number interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Median is the middle value of v, or the mean of the two middle ones when
// their number is even (for integers, that mean rounds toward zero, as Go's
// integer division does); ok is false for no value. v is not changed.
func Median[T Number](v []T) (m T, ok bool) {
	if len(v) == 0 {
		return m, false
	}
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}
