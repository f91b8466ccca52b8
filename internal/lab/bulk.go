// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"fmt"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/result"
)

// RunBulk runs the bulk study spec against the session's target (spec's
// Target and Server become the session's, o's ClientCPUs this process's).
// With a network not in front (WithNetem front false) a netem proxy is put
// in front of each of the server's listeners, and every record describes
// it. Every record goes to the records output (the Output with Keep and
// Open) as it is measured, and is returned. If the child server exits, the
// step in progress is kept as failed with the server's exit status, no
// further step runs, and the error wraps ErrServerExited.
func (s *Session) RunBulk(ctx context.Context, spec *bulk.Spec, o bulk.Options) ([]result.BulkRecord, error) {
	if s.cfg.network != nil && s.cfg.front {
		return nil, fmt.Errorf("%w: bulk puts a netem proxy in front of each listener, not one in front of the target (WithNetem front false)", ErrInvalidOption)
	}
	spec.Target, spec.Server = s.Target, s.Server
	o.ClientCPUs = s.ClientCPUs
	if s.cfg.network != nil {
		o.Via = func(ctx context.Context, _, addr string) (string, error) {
			p, err := s.Proxy(ctx, addr)
			if err != nil {
				return "", err
			}
			return p.Addr, nil
		}
		o.Netem = NetemSpec(*s.cfg.network, spec.Target)
	}
	wctx, stop := s.Watch(ctx)
	defer stop()
	w := s.recordsWriter()
	var recs []result.BulkRecord
	sink := func(r *result.BulkRecord) error {
		if serr := s.death(ctx, r.Status == result.StatusFailed); serr != nil {
			r.Status, r.Error = result.StatusFailed, serr.Error()
		}
		recs = append(recs, *r)
		if w != nil {
			return w.Write(r)
		}
		return nil
	}
	err := bulk.Run(wctx, spec, o, sink)
	if serr := s.death(ctx, false); serr != nil {
		return recs, serr
	}
	return recs, err
}
