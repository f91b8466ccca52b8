// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package extclient

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/rpclab/rpclab/internal/loadgen"
)

// StepSpec is one line of the steps file a driver hands a client
// (docs/clients.md, "The step spec"; schema/step.schema.json): one step,
// complete in itself, durations in nanoseconds.
type StepSpec struct {
	Target       string `json:"target"`
	Service      string `json:"service"`
	RPC          string `json:"rpc"`
	Conn         string `json:"conn"`
	Inflight     int    `json:"inflight"`
	PayloadBytes int    `json:"payload_bytes"`
	WarmupNS     int64  `json:"warmup_ns"`
	IntervalNS   int64  `json:"interval_ns"`
	ClientCPUs   []int  `json:"client_cpus,omitempty"`
	Out          string `json:"out"`
}

// Steps lists spec's steps for a client with layouts conns, in the order
// the client runs them (rpc, conn, in-flight, outermost first), each
// appending its record to out.
func Steps(spec *loadgen.Spec, conns []string, cpus []int, out string) []StepSpec {
	service := spec.Service
	if service == "" {
		service = loadgen.Benchmark
	}
	var steps []StepSpec
	for _, rpc := range spec.RPCs {
		for _, conn := range conns {
			for _, n := range spec.Inflight {
				steps = append(steps, StepSpec{
					Target: spec.Target, Service: string(service), RPC: rpc, Conn: conn, Inflight: n,
					PayloadBytes: spec.PayloadBytes, WarmupNS: int64(spec.Warmup), IntervalNS: int64(spec.Interval),
					ClientCPUs: cpus, Out: out,
				})
			}
		}
	}
	return steps
}

// WriteSteps writes steps as JSON Lines.
func WriteSteps(w io.Writer, steps []StepSpec) error {
	enc := json.NewEncoder(w)
	for i := range steps {
		if err := enc.Encode(&steps[i]); err != nil {
			return fmt.Errorf("extclient: step %d: %w", i+1, err)
		}
	}
	return nil
}
