// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import "strconv"

// Bulk transports, as BulkSpec.Transport (and rpclab bulk --transport)
// spells them; schema/bulk.schema.json lists the same names.
const (
	// BulkGRPC is BulkService.Download with grpc-go's defaults.
	BulkGRPC = "grpc"
	// BulkGRPCTuned is BulkService.Download with the zero-copy codec and a
	// larger read buffer (docs/bulk.md).
	BulkGRPCTuned = "grpc-tuned"
	// BulkTCP is a plain TCP connection: the baseline of the "x tcp" column.
	BulkTCP         = "tcp"
	BulkHTTP1       = "http1"
	BulkHTTP2       = "http2"
	BulkSidechannel = "sidechannel"
)

// BulkTransports lists every bulk transport in the order reports show them.
var BulkTransports = []string{BulkGRPC, BulkGRPCTuned, BulkTCP, BulkHTTP1, BulkHTTP2, BulkSidechannel}

// Flow transports, as FlowRecord.Transport (and rpclab flow --transport)
// spells them; schema/flow.schema.json lists the same names.
const (
	// FlowGRPCDynamic is grpc-go with its defaults: 64 KiB initial windows
	// that BDP estimation grows.
	FlowGRPCDynamic = "grpc-dynamic"
	// FlowGRPCFixed sets both windows to a fixed size (FlowRecord.WindowBytes)
	// on client and server, which turns BDP estimation off.
	FlowGRPCFixed = "grpc-fixed"
	// FlowH2C is HTTP/2 without TLS, prior knowledge: a POST of the
	// payload, with the http2 package's default windows.
	FlowH2C = "h2c"
	// FlowHTTP1 is net/http over HTTP/1.1: a POST of the payload.
	FlowHTTP1 = "http1"
)

// FlowTransports lists every flow transport in the order the study runs
// them and reports show them.
var FlowTransports = []string{FlowGRPCDynamic, FlowGRPCFixed, FlowH2C, FlowHTTP1}

// FlowFirstRPCs is how many RPCs of a flow cell count as its start: the
// table lists them one by one, and FlowRecord.SteadyNS is the median of
// those after them (SteadyFrom is FlowFirstRPCs+1 when more finished).
const FlowFirstRPCs = 10

// binaryUnits are the units FormatBytes writes, largest first.
var binaryUnits = []struct {
	suffix string
	mult   int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// FormatBytes writes a byte count of a record (a size, a chunk) with the
// largest binary unit that divides it ("64KiB", "1GiB", "1000B").
func FormatBytes(n int64) string {
	for _, u := range binaryUnits {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// rateUnits are the units FormatRate writes, largest first: tc(8)'s bits
// per second in powers of 1000.
var rateUnits = []struct {
	suffix string
	mult   float64
}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}}

// FormatRate writes an emulated bandwidth, bits per second, in the largest
// tc(8) unit that keeps the number short ("1gbit", "2.5mbit", "500bit";
// "0" for unlimited), as rpclab's --rate flags take it and netem.ParseRate
// reads it back. It is the one formatter of a rate: netem's link
// descriptions, lab's proxy flags and every report print through it.
func FormatRate(bps int64) string {
	if bps == 0 {
		return "0"
	}
	for _, u := range rateUnits {
		if float64(bps) >= u.mult {
			return strconv.FormatFloat(float64(bps)/u.mult, 'g', -1, 64) + u.suffix
		}
	}
	return strconv.FormatInt(bps, 10) + "bit"
}

// ConnLabel names a connection layout as rpclab's --conn spells it:
// "shared", "per-worker", "pool:4", "pool:4:least-loaded"; a pool's
// round-robin pick (or none given) is the default and is not written. It
// is the one formatter of a layout: loadgen's ConnMode.String and every
// report's label of a record (Spec.ConnLabel) both print through it.
func ConnLabel(mode string, conns int, pick string) string {
	switch {
	case mode != "pool":
		return mode
	case pick == "" || pick == "round-robin":
		return "pool:" + strconv.Itoa(conns)
	default:
		return "pool:" + strconv.Itoa(conns) + ":" + pick
	}
}

// AutoPoolLabel names an adaptive pool of minConns to maxConns connections
// as --conn spells it: "pool:auto:1:8" (the bounds are always written, so
// records of different defaults never share a label).
func AutoPoolLabel(minConns, maxConns int) string {
	return "pool:auto:" + strconv.Itoa(minConns) + ":" + strconv.Itoa(maxConns)
}

// ConnLabel names the step's connection layout as --conn spells it, from
// its conn_mode, conns_requested (conns_min) and pick (see the function
// ConnLabel, and AutoPoolLabel for "pool-auto").
func (s *Spec) ConnLabel() string {
	if s.ConnMode == "pool-auto" {
		return AutoPoolLabel(s.ConnsMin, s.ConnsRequested)
	}
	return ConnLabel(s.ConnMode, s.ConnsRequested, s.Pick)
}
