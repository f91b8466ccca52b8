// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/loadgen"
	"github.com/rpclab/rpclab/loadgen/extclient"
	"github.com/rpclab/rpclab/result"
)

// spec maps the flags to a loadgen.Spec; fs tells which flags were set.
func (sf *sweepFlags) spec(fs *pflag.FlagSet) (*loadgen.Spec, error) {
	payload, err := result.ParseBytes(sf.payload)
	if err != nil || payload > math.MaxInt32 {
		return nil, usageError{fmt.Errorf("--payload: %q is not a payload size (bytes, or with a unit: 1KiB, 64KB; at most 4MiB)", sf.payload)}
	}
	service, err := loadgen.ParseService(sf.service)
	if err != nil {
		return nil, err
	}
	if service != loadgen.Benchmark {
		switch {
		case sf.client != "go" || len(sf.clients) > 0:
			return nil, usageError{fmt.Errorf("--service %s: only the go client drives it from rpclab (the C++ client speaks it in YDB mode: clients/cpp/rpclab-client --host HOST:PORT, see docs/clients.md)", service)}
		case sf.open.call != "":
			return nil, usageError{fmt.Errorf("--service %s and --call are exclusive (--call names its own method)", service)}
		}
	}
	s := &loadgen.Spec{
		Target:       sf.target,
		Service:      service,
		RPCs:         sf.rpcs,
		Inflight:     sf.inflight,
		PayloadBytes: int(payload),
		Warmup:       sf.warmup,
		Interval:     sf.interval,
		DialTimeout:  sf.dialTimeout,
		RPCTimeout:   sf.rpcTimeout,
	}
	if fs.Changed("min-inflight") || fs.Changed("max-inflight") {
		if fs.Changed("inflight") {
			return nil, usageError{errors.New("--inflight and --min-inflight/--max-inflight are exclusive")}
		}
		lo, hi := sf.minInflight, sf.maxInflight
		if !fs.Changed("min-inflight") {
			lo = 1
		}
		if !fs.Changed("max-inflight") {
			return nil, usageError{errors.New("--min-inflight needs --max-inflight")}
		}
		r, err := loadgen.InflightRange(lo, hi, sf.step)
		if err != nil {
			return nil, err
		}
		s.Inflight = r
	}
	if len(sf.conns) == 0 {
		return nil, usageError{errors.New("--conn: no connection mode given")}
	}
	if err := sf.noDuplicates(s); err != nil {
		return nil, err
	}
	for i, lang := range append([]string{sf.client}, sf.clients...) {
		if lang != "go" && !slices.Contains(extclient.Languages, lang) {
			flag := "--client"
			if i > 0 {
				flag = "--clients"
			}
			return nil, usageError{fmt.Errorf("%s: unknown client %q (want go, %s)", flag, lang, strings.Join(extclient.Languages, ", "))}
		}
	}
	if sf.client == "go" && len(sf.clients) == 0 {
		conns, err := goConns(sf.conns)
		if err != nil {
			return nil, err
		}
		s.Conns = conns
	} else if len(sf.clients) == 0 { // rpclab compare's clients are planned in planClients
		for _, c := range sf.conns {
			if !extclient.HasLayout(sf.client, c) {
				return nil, usageError{fmt.Errorf("--conn: the %s client has no layout %q", sf.client, c)}
			}
		}
	}
	return s, s.ValidateLoad()
}

// noDuplicates refuses a value given twice in --inflight (or the range),
// --rpc, --clients or --conn (by layout: pool:4 is pool:4:round-robin;
// a layout that does not parse is left to its client's check).
func (sf *sweepFlags) noDuplicates(s *loadgen.Spec) error {
	self := func(v string) string { return v }
	if err := noDuplicates("--inflight", s.Inflight, func(n int) int { return n }); err != nil {
		return err
	}
	if err := noDuplicates("--rpc", s.RPCs, self); err != nil {
		return err
	}
	if err := noDuplicates("--clients", sf.clients, self); err != nil {
		return err
	}
	return noDuplicates("--conn", sf.conns, func(c string) string {
		if m, err := loadgen.ParseConnMode(c); err == nil {
			return m.String()
		}
		return c
	})
}

// goConns parses --conn layouts for the Go client.
func goConns(list []string) ([]loadgen.ConnMode, error) {
	var out []loadgen.ConnMode
	for _, c := range list {
		m, err := loadgen.ParseConnMode(c)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
