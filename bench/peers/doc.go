// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package peers sets rpclab's connection pool beside the pools people would
// pick instead: the round-robin pool of Google's Go client libraries
// (google.golang.org/api/transport/grpc), a general object pool holding
// ClientConns (github.com/jolestar/go-commons-pool/v2, borrow and return per
// call), one bare ClientConn, and one ClientConn per goroutine.
//
// It is its own Go module, so rpclab's module never depends on the peers.
// The evaluation of self-sizing policies on rpclab's pool is apart, in
// package policy and the policies command.
//
// The comparison is `go test -bench Pools` here (see docs/peers.md); the
// tests check that every peer works against a real rpclab server, so the
// benchmark cannot rot silently. The load-generator and emulator comparisons
// are the program in cmd/peers, run by experiments/peers/run.sh.
package peers
