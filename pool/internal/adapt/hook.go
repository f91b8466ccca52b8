// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package adapt

// NewOption makes a pool.Option (returned as any) that sizes the pool by
// r, or, if sizer is true, by s between r's Min and Max at r's Interval
// (New then rejects a nil s).
// Package pool sets it in its init, so that pool/adaptive can build
// options without pool exporting its policy: the pattern of grpc-go's
// internal package.
var NewOption func(r Rule, s Sizer, sizer bool) any
