// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// spec maps the flags to a loadgen.Spec: the target group's part and the
// steps group's, then the checks across groups; fs tells which flags were
// set.
func (sf *sweepFlags) spec(fs *pflag.FlagSet) (*loadgen.Spec, error) {
	s := &loadgen.Spec{}
	if err := sf.targetFlags.apply(s); err != nil {
		return nil, err
	}
	if s.Service != loadgen.Benchmark {
		switch {
		case len(sf.clients) > 0 || sf.client != "go":
			return nil, usage.Wrap(fmt.Errorf("--service %s: only the go client drives it from rpclab (the C++ rpclab-ydb-ping speaks it: clients/cpp/rpclab-ydb-ping --host HOST:PORT, see docs/clients.md)", s.Service))
		case sf.open.call != "":
			return nil, usage.Wrap(fmt.Errorf("--service %s and --call are exclusive (--call names its own method)", s.Service))
		}
	}
	if err := sf.stepFlags.apply(fs, s); err != nil {
		return nil, err
	}
	if len(sf.conns) == 0 {
		return nil, usage.Wrap(errors.New("--conn: no connection mode given"))
	}
	if err := sf.noDuplicates(s); err != nil {
		return nil, err
	}
	langs, flag := []string{sf.client}, "--client"
	if len(sf.clients) > 0 { // compare, which has no --client
		langs, flag = sf.clients, "--clients"
	}
	for _, lang := range langs {
		if lang != "go" && !slices.Contains(extclient.Languages, lang) {
			return nil, usage.Wrap(fmt.Errorf("%s: unknown client %q (want go, %s)", flag, lang, strings.Join(extclient.Languages, ", ")))
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
				return nil, usage.Wrap(fmt.Errorf("--conn: the %s client has no layout %q", sf.client, c))
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

// apply sets the target group's part of s: what is called, where, and the
// deadlines.
func (tf *targetFlags) apply(s *loadgen.Spec) error {
	payload, err := result.ParseBytes(tf.payload)
	if err != nil || payload > math.MaxInt32 {
		return usage.Wrap(fmt.Errorf("--payload: %q is not a payload size (bytes, or with a unit: 1KiB, 64KB; at most 4MiB)", tf.payload))
	}
	service, err := loadgen.ParseService(tf.service)
	if err != nil {
		return err
	}
	s.Target, s.Service, s.PayloadBytes = tf.target, service, int(payload)
	s.DialTimeout, s.RPCTimeout = tf.dialTimeout, tf.rpcTimeout
	return nil
}

// apply sets the steps group's part of s but the layouts (each client
// parses its own): the RPC kinds, the in-flight counts (--inflight, or
// the --min-inflight/--max-inflight range), warm-up and interval.
func (st *stepFlags) apply(fs *pflag.FlagSet, s *loadgen.Spec) error {
	s.RPCs, s.Inflight, s.Warmup, s.AutoWarmup, s.Interval = st.rpcs, st.inflight, st.warmup, st.autoWarmup, st.interval
	if !fs.Changed("min-inflight") && !fs.Changed("max-inflight") {
		return nil
	}
	if fs.Changed("inflight") {
		return usage.Wrap(errors.New("--inflight and --min-inflight/--max-inflight are exclusive"))
	}
	lo, hi := st.minInflight, st.maxInflight
	if !fs.Changed("min-inflight") {
		lo = 1
	}
	if !fs.Changed("max-inflight") {
		return usage.Wrap(errors.New("--min-inflight needs --max-inflight"))
	}
	r, err := loadgen.InflightRange(lo, hi, st.step)
	if err != nil {
		return err
	}
	s.Inflight = r
	return nil
}
