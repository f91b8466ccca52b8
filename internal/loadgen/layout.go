// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"fmt"
	"strings"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// openLayout opens step's pools; an AutoPool's is sized by rule (nil:
// adaptive.DefaultRule) between the layout's min and max.
func openLayout(target string, step Step, rule *adaptive.Rule, dial []grpc.DialOption) ([]*pool.Pool, error) {
	var pools []*pool.Pool
	add := func(size int) error {
		sizing := pool.WithSize(size)
		if step.Conn.Kind == AutoPool {
			sizing = adaptive.WithRule(autoRule(step.Conn, rule))
		}
		p, err := pool.New(target, sizing, pool.WithPolicy(step.Conn.Pick), pool.WithDialOptions(dial...))
		if err != nil {
			return err
		}
		pools = append(pools, p)
		return nil
	}
	var err error
	switch step.Conn.Kind {
	case Shared:
		err = add(1)
	case PerWorker:
		for i := 0; i < step.Inflight && err == nil; i++ {
			err = add(1)
		}
	case Pooled, AutoPool:
		err = add(step.Conn.N)
	default:
		err = fmt.Errorf("loadgen: unknown connection mode %q", step.Conn.Kind)
	}
	if err != nil {
		for _, p := range pools {
			_ = p.Close()
		}
		return nil, err
	}
	return pools, nil
}

// HostPort strips a "scheme:///" prefix from a target.
func HostPort(target string) string {
	if i := strings.Index(target, ":///"); i >= 0 {
		return target[i+4:]
	}
	return target
}
