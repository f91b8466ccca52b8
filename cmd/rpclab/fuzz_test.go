// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/flow"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/result"
)

// committedRecords reads the records committed with the
// testdata and the docs, the fuzz targets' seeds.
func committedRecords(f *testing.F) []result.Set {
	f.Helper()
	var sets []result.Set
	for _, g := range []string{"../../testdata/results/*.jsonl", "../../docs/img/*.jsonl", "../../internal/result/testdata/*.jsonl"} {
		files, err := filepath.Glob(g)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range files {
			set, err := result.ReadAllFile(f.Context(), p)
			if err != nil {
				f.Fatal(err)
			}
			sets = append(sets, *set)
		}
	}
	if len(sets) == 0 {
		f.Fatal("no committed records to seed from")
	}
	return sets
}

// namesAFlag reports whether msg names one of the flags in args.
func namesAFlag(msg string, args []string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if strings.Contains(msg, name) {
			return true
		}
	}
	return false
}

// flagArgs makes "--name=value" arguments of the non-empty values.
func flagArgs(names []string, vals ...string) []string {
	var args []string
	for i, v := range vals {
		if v != "" {
			args = append(args, "--"+names[i]+"="+v)
		}
	}
	return args
}

// FuzzNetemFlags: the netem spec as every command takes it (--delay,
// --jitter, --rate and their --down-* overrides, durations as pflag
// parses them) never panics; what it refuses is a usage error naming one
// of the flags given; what it accepts is a network whose links validate
// and carry the values given (a direction without overrides copies the
// other). Seeded with the links of the committed records. Run:
//
//	go test -run '^$' -fuzz FuzzNetemFlags -fuzztime 20s ./cmd/rpclab
func FuzzNetemFlags(f *testing.F) {
	for _, set := range committedRecords(f) {
		for _, r := range set.Ping {
			if n := r.Spec.Netem; n != nil {
				f.Add(time.Duration(n.Up.DelayNS).String(), time.Duration(n.Up.JitterNS).String(), result.FormatRate(n.Up.RateBps),
					time.Duration(n.Down.DelayNS).String(), time.Duration(n.Down.JitterNS).String(), result.FormatRate(n.Down.RateBps))
			}
		}
	}
	f.Add("2.5ms", "50us", "1gbit", "", "", "")
	f.Add("-1ms", "", "2000", "", "", "")
	f.Add("1ms", "2ms", "", "", "", "")
	f.Add("9223372036s", "", "1e400gbit", "1h", "", "0")
	f.Fuzz(func(t *testing.T, delay, jitter, rate, downDelay, downJitter, downRate string) {
		names := []string{"delay", "jitter", "rate", "down-delay", "down-jitter", "down-rate"}
		args := flagArgs(names, delay, jitter, rate, downDelay, downJitter, downRate)
		var nf netemFlags
		fs := pflag.NewFlagSet("fuzz", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		nf.register(fs)
		if err := fs.Parse(args); err != nil {
			if !namesAFlag(err.Error(), args) {
				t.Fatalf("%q: the flag error %q names no flag given", args, err)
			}
			return
		}
		n, ok, err := nf.network(fs)
		if ok != (len(args) > 0) {
			t.Fatalf("%q: network says netem was asked for: %v", args, ok)
		}
		if err != nil {
			msg, usage := usageMessage(err)
			if !usage || !namesAFlag(msg, args) {
				t.Fatalf("%q: got %q (usage error %v), want a usage error naming a flag given", args, msg, usage)
			}
			return
		}
		for _, l := range []netem.Link{n.Up, n.Down} {
			if err := l.Validate(); err != nil {
				t.Fatalf("%q: accepted a link that does not validate: %+v: %v", args, l, err)
			}
		}
		if n.Up.Delay != nf.delay || n.Up.Jitter != nf.jitter {
			t.Fatalf("%q: up link %+v, want delay %v jitter %v", args, n.Up, nf.delay, nf.jitter)
		}
		if rate != "" {
			if bps, _ := netem.ParseRate(rate); n.Up.RateBps != bps {
				t.Fatalf("%q: up rate %d, want %d", args, n.Up.RateBps, bps)
			}
		}
		want := n.Up
		if downDelay != "" {
			want.Delay = nf.downDelay
		}
		if downJitter != "" {
			want.Jitter = nf.downJitter
		}
		if downRate != "" {
			want.RateBps, _ = netem.ParseRate(downRate)
		}
		if n.Down != want {
			t.Fatalf("%q: down link %+v, want %+v", args, n.Down, want)
		}
	})
}

// FuzzFlowFlags: flow's settings (--payload lists, --rtt lists, --rate,
// --window, --rpcs, --budget, --transport) never panic; what they refuse is
// a usage error naming one of the flags given; what they accept is a spec
// that validates. Seeded with the cells of the committed records. Run:
//
//	go test -run '^$' -fuzz FuzzFlowFlags -fuzztime 20s ./cmd/rpclab
func FuzzFlowFlags(f *testing.F) {
	for _, set := range committedRecords(f) {
		for _, r := range set.Flow {
			f.Add(strconv.FormatInt(r.PayloadBytes, 10), time.Duration(r.RTTNS).String(), result.FormatRate(r.RateBps),
				strconv.Itoa(r.WindowBytes), strconv.Itoa(r.RPCsRequested), time.Duration(r.BudgetNS).String(), r.Transport)
		}
	}
	f.Add("1KB,1MB", "0,16ms", "1gbit", "65535", "20", "10s", "grpc-dynamic,grpc-fixed")
	f.Add("-1KB", "-1ms", "2000", "1024", "0", "0s", "smtp")
	f.Add("10GB", "", "", "-1", "", "-1s", "")
	f.Fuzz(func(t *testing.T, payloads, rtts, rate, window, rpcs, budget, transports string) {
		names := []string{"payload", "rtt", "rate", "window", "rpcs", "budget", "transport"}
		args := flagArgs(names, payloads, rtts, rate, window, rpcs, budget, transports)
		var (
			spec       flow.Spec
			pl         []string
			rateFlag   string
			windowFlag int
		)
		fs := pflag.NewFlagSet("fuzz", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.StringSliceVar(&spec.Transports, "transport", flow.Transports, "")
		fs.StringSliceVar(&pl, "payload", []string{"1KB"}, "")
		fs.DurationSliceVar(&spec.RTTs, "rtt", []time.Duration{0}, "")
		fs.StringVar(&rateFlag, "rate", "", "")
		fs.IntVar(&spec.RPCs, "rpcs", 20, "")
		fs.DurationVar(&spec.Budget, "budget", 10*time.Second, "")
		fs.IntVar(&windowFlag, "window", 64<<10, "")
		if err := fs.Parse(args); err != nil {
			if !namesAFlag(err.Error(), args) {
				t.Fatalf("%q: the flag error %q names no flag given", args, err)
			}
			return
		}
		if err := parseFlow(&spec, pl, rateFlag, windowFlag); err != nil {
			msg, usage := usageMessage(err)
			if !usage || !namesAFlag(msg, args) {
				t.Fatalf("%q: got %q (usage error %v), want a usage error naming a flag given", args, msg, usage)
			}
			return
		}
		if err := spec.Validate(); err != nil {
			t.Fatalf("%q: accepted a spec that does not validate: %v", args, err)
		}
	})
}

// FuzzSweepFlags: the load a sweep is asked for (--inflight lists,
// --min-inflight/--max-inflight/--step, --payload, and the durations
// --warmup, --interval, --dial-timeout, --rpc-timeout) never panics; what
// it refuses is a usage error naming one of the flags given; what it
// accepts is a spec of in-flight counts in 1..loadgen.MaxInflight, rising
// for a range, a payload under 4 MiB and valid durations. Seeded with the
// steps of the committed records. Run:
//
//	go test -run '^$' -fuzz FuzzSweepFlags -fuzztime 20s ./cmd/rpclab
func FuzzSweepFlags(f *testing.F) {
	for _, set := range committedRecords(f) {
		for _, r := range set.Ping {
			f.Add(strconv.Itoa(r.Spec.Inflight)+",1,2", "", "", "", strconv.Itoa(r.Spec.PayloadBytes),
				time.Duration(r.Spec.WarmupNS).String(), time.Duration(r.Spec.IntervalNS).String(), "", "")
			f.Add("", "1", strconv.Itoa(r.Spec.Inflight), "2", "", "", "", "5s", "1s")
		}
	}
	f.Add("1,2,4", "", "", "", "1KiB", "1s", "2s", "", "")
	f.Add("", "1", "2", "9223372036854775807", "", "", "", "", "")
	f.Add("0", "", "", "", "10GB", "-1s", "0s", "0s", "-1ms")
	f.Add("", "", "16", "", "-1", "", "", "", "")
	f.Fuzz(func(t *testing.T, inflight, lo, hi, step, payload, warmup, interval, dialTimeout, rpcTimeout string) {
		names := []string{"inflight", "min-inflight", "max-inflight", "step", "payload", "warmup", "interval", "dial-timeout", "rpc-timeout"}
		args := flagArgs(names, inflight, lo, hi, step, payload, warmup, interval, dialTimeout, rpcTimeout)
		var sf sweepFlags
		fs := pflag.NewFlagSet("fuzz", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		sf.register(fs, sweepDefaults{inflight: []int{1, 2}, conns: []string{"shared"}, warmup: time.Second, interval: time.Second})
		if err := fs.Parse(args); err != nil {
			if !namesAFlag(err.Error(), args) {
				t.Fatalf("%q: the flag error %q names no flag given", args, err)
			}
			return
		}
		spec, err := sf.spec(fs)
		if err != nil {
			msg, usage := usageMessage(err)
			if !usage || !namesAFlag(msg, args) {
				t.Fatalf("%q: got %q (usage error %v), want a usage error naming a flag given", args, msg, usage)
			}
			return
		}
		if len(spec.Inflight) == 0 {
			t.Fatalf("%q: accepted no in-flight count", args)
		}
		for i, n := range spec.Inflight {
			if n < 1 || n > loadgen.MaxInflight {
				t.Fatalf("%q: accepted in-flight %d", args, n)
			}
			if lo != "" || hi != "" {
				if i > 0 && n <= spec.Inflight[i-1] {
					t.Fatalf("%q: the range %v does not rise", args, spec.Inflight)
				}
			}
		}
		if spec.PayloadBytes < 0 || spec.PayloadBytes >= 4<<20 || spec.Warmup < 0 || spec.Interval <= 0 ||
			spec.DialTimeout <= 0 || spec.RPCTimeout < 0 {
			t.Fatalf("%q: accepted %+v", args, spec)
		}
	})
}
