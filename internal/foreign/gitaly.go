// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package foreign

import (
	"fmt"
	"math"

	"github.com/rpclab/rpclab/internal/result"
)

const gitalyHeader = "repository,server,pack_objects_cache,egress_mb_s,system_load_per_cpu,cpu_utilization_pct"

// gitalyStreams is the experiment's parallel clone loops (30 concurrent
// fetches, each its own connection).
const gitalyStreams = 30

// ParseGitalyCSV reads Gitaly's fetch-traffic table (header
// repository,server,pack_objects_cache,egress_mb_s,system_load_per_cpu,
// cpu_utilization_pct): each row becomes a bulk record, transport grpc
// for gitaly-grpc (regular Gitaly, grpc-go) and tcp for rpctest-tcp (the
// same fetch path over plain TCP sockets), 30 streams, throughput the
// egress in MB/s (10^6 bytes). The target names the repository and the
// pack-objects cache; the server's load and CPU, which no bulk field holds
// (they are the whole machine's, not the process's), are said in source.
// A wrong header, a short row, a value that is not a number or out of
// range, or a cell seen twice is an error naming its line and column.
func ParseGitalyCSV(data []byte, o Options) ([]result.BulkRecord, error) {
	t, err := readTable(data, gitalyHeader)
	if err != nil {
		return nil, err
	}
	var recs []result.BulkRecord
	seen := map[[3]string]int{}
	for _, r := range t.rows {
		repo := r.fields[0]
		if repo == "" {
			return nil, posErr(r.line, 1, "repository is empty")
		}
		server, err := t.oneOf(r, 1, "gitaly-grpc", "rpctest-tcp")
		if err != nil {
			return nil, err
		}
		cache, err := t.oneOf(r, 2, "on", "off")
		if err != nil {
			return nil, err
		}
		egress, err := t.num(r, 3, 0, 1e7)
		if err != nil {
			return nil, err
		}
		if _, err := t.num(r, 4, 0, 1e4); err != nil {
			return nil, err
		}
		if _, err := t.num(r, 5, 0, 100); err != nil {
			return nil, err
		}
		key := [3]string{repo, server, cache}
		if first, dup := seen[key]; dup {
			return nil, posErr(r.line, 1, "%s, %s, cache %s again (first on line %d)", repo, server, cache, first)
		}
		seen[key] = r.line
		transport := result.BulkGRPC
		if server == "rpctest-tcp" {
			transport = result.BulkTCP
		}
		recs = append(recs, result.BulkRecord{
			SchemaVersion: result.SchemaVersion, Kind: result.KindBulk, Status: result.StatusOK,
			Spec: result.BulkSpec{
				Target:    fmt.Sprintf("%s (pack-objects cache %s)", repo, cache),
				Transport: transport, Streams: gitalyStreams, Server: server,
			},
			Env:                 result.Env{Language: "go", GRPCImpl: "grpc-go", GRPCVersion: "1.29.0", RuntimeVersion: "Gitaly"},
			ThroughputBytesPerS: math.Round(egress * 1e6),
			ServerCPUNS:         -1, ServerCPUSPerGiB: -1, ServerAllocBytes: -1, ServerAllocs: -1,
			ServerAllocBytesPerMiB: -1, ServerAllocsPerRequest: -1, ClientPeakRSSBytes: -1, ServerPeakRSSBytes: -1,
			Source: fmt.Sprintf("%s; server load %s per CPU, CPU %s%% non-idle", o.Source, r.fields[4], r.fields[5]),
		})
	}
	return recs, nil
}
