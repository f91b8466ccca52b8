// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !linux

package live

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/rpclab/rpclab/internal/sockdiag"
)

func (s *Sampler) read() (*snapshot, error) { return nil, fmt.Errorf("live: %w", ErrUnsupported) }

type diag struct{}

type sock struct {
	inode         uint32
	local, remote netip.AddrPort
	info          sockdiag.TCPInfo
}

func openDiag(int) (*diag, error) { return nil, fmt.Errorf("live: %w", ErrUnsupported) }
func (*diag) close()              {}
func (*diag) sameNetns() bool     { return false }

func readProcess(int) (string, time.Duration, []thread, error) {
	return "", 0, nil, fmt.Errorf("live: %w", ErrUnsupported)
}

func allowedCPUs(int) (int, float64) { return 0, 0 }
