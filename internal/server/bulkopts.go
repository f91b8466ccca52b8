// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/sidechannel"
)

// DefaultMaxBulkConns caps the connections the raw TCP bulk listener holds
// open at once, the HTTP listener's, the sidechannel transfers under way
// and the sidechannel ids pending, when WithMaxBulkConns is not given: far
// above what a bulk run opens (one per stream and transport), far below a
// process's file descriptor limit.
const DefaultMaxBulkConns = 256

// DefaultBulkReadTimeout is how long the raw TCP and HTTP listeners wait
// for a request (the first on a connection, or the next after a download)
// before they close the connection, when WithBulkReadTimeout is not given. A bulk
// client sends its next request at once; a silent connection is a leak.
const DefaultBulkReadTimeout = 30 * time.Second

// BulkOption configures StartBulk.
type BulkOption func(*bulkConfig) error

type bulkConfig struct {
	maxSize     int64
	maxConns    int
	readTimeout time.Duration
	tls         *tls.Config
	sidechannel []sidechannel.Option // after the ones the fields above give (tests)
}

func defaultBulkConfig() bulkConfig {
	return bulkConfig{maxSize: bulk.MaxSize, maxConns: DefaultMaxBulkConns, readTimeout: DefaultBulkReadTimeout}
}

// WithMaxBulkSize sets the most bytes one bulk request may ask for, on every
// transport (default bulk.MaxSize, 64 GiB; 0 means the default). A larger
// request is refused before a byte is sent (gRPC InvalidArgument, HTTP 400,
// raw TCP: a refusal naming it, the sidechannel: InvalidArgument on the
// call).
func WithMaxBulkSize(n int64) BulkOption {
	return func(c *bulkConfig) error {
		if n < 0 {
			return fmt.Errorf("%w: maximum bulk size %d is negative", ErrBadOption, n)
		}
		if n > 0 {
			c.maxSize = n
		}
		return nil
	}
}

// WithMaxBulkConns caps the connections the raw TCP bulk listener holds
// open, the HTTP listener's, the sidechannel transfers under way, and the
// sidechannel ids waiting for their other half (sidechannel.WithMaxPending)
// (default DefaultMaxBulkConns; 0 means the default). Past it, the raw TCP
// listener answers a new connection with a refusal naming the cap
// (bulk.RefusalMagic) and closes it, the HTTP listener answers 503 naming
// it, and a SidechannelDownload gets ResourceExhausted naming it (a
// sidechannel hello past the pending cap is closed by package sidechannel).
func WithMaxBulkConns(n int) BulkOption {
	return func(c *bulkConfig) error {
		if n < 0 {
			return fmt.Errorf("%w: maximum bulk connections %d is negative", ErrBadOption, n)
		}
		if n > 0 {
			c.maxConns = n
		}
		return nil
	}
}

// WithBulkReadTimeout sets how long the raw TCP listener waits for a
// request, and the HTTP listener for a request's header or the next
// request on a kept-alive connection, before it closes the connection
// (default DefaultBulkReadTimeout; 0 means the default).
func WithBulkReadTimeout(d time.Duration) BulkOption {
	return func(c *bulkConfig) error {
		if d < 0 {
			return fmt.Errorf("%w: bulk read timeout %v is negative", ErrBadOption, d)
		}
		if d > 0 {
			c.readTimeout = d
		}
		return nil
	}
}

// WithBulkTLS serves every bulk listener StartBulk opens over TLS with cfg
// (default nil: plaintext): grpc-tuned with gRPC TLS credentials, raw TCP
// inside crypto/tls, HTTP over TLS (HTTP/1.1 and h2, by ALPN, instead of
// h2c). Give it the main server's Options.TLS, under which the sidechannel
// runs TLS too, so every transport of one server is encrypted or none is.
func WithBulkTLS(cfg *tls.Config) BulkOption {
	return func(c *bulkConfig) error {
		if cfg != nil && len(cfg.Certificates) == 0 && cfg.GetCertificate == nil {
			return fmt.Errorf("%w: bulk TLS config has no certificate", ErrBadOption)
		}
		c.tls = cfg
		return nil
	}
}
