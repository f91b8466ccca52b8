// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"errors"
	"testing"

	"github.com/rpclab/rpclab/internal/limitread"
	"github.com/rpclab/rpclab/internal/server"
)

// TestLoadTLSBounded: --tls-cert and --tls-key are read within
// server.MaxPEMBytes: an endless file (/dev/zero) is an error wrapping
// limitread.ErrTooLarge, and a good pair still loads.
func TestLoadTLSBounded(t *testing.T) {
	cert, key, _ := selfSigned(t, t.TempDir())
	tests := []struct {
		name      string
		cert, key string
		want      error
	}{
		{"good pair", cert, key, nil},
		{"endless certificate", "/dev/zero", key, limitread.ErrTooLarge},
		{"endless key", cert, "/dev/zero", limitread.ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := server.LoadTLS(tc.cert, tc.key); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}
