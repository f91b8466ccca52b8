// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import "google.golang.org/grpc"

// Option configures a Pool. Options are applied in order and validated by New.
type Option func(*config) error

type config struct {
	size     int
	dialOpts []grpc.DialOption
}

// DefaultSize is the size of a pool when WithSize is not given.
const DefaultSize = 4

func defaultConfig() *config {
	return &config{size: DefaultSize}
}

// WithSize sets the number of connections (default DefaultSize). New
// rejects values below 1.
func WithSize(n int) Option {
	return func(c *config) error { c.size = n; return nil }
}

// WithDialOptions passes options to grpc.NewClient for every connection:
// credentials, interceptors, keepalive. Nothing is assumed: as with
// grpc.NewClient, credentials must be given (for plaintext,
// grpc.WithTransportCredentials(insecure.NewCredentials())).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) error { c.dialOpts = append(c.dialOpts, opts...); return nil }
}
