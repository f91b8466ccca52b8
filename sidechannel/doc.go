// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package sidechannel carries bulk bytes beside a gRPC call, on a plain
// connection to the same listener and port as the gRPC server.
//
// The fix is Gitaly's (gitlab-org/gitaly, internal/sidechannel): keep the
// call's control in gRPC and move the bytes off HTTP/2 framing. Gitaly does
// it by wrapping the client's connection in a yamux session and dialling
// back over it; this package instead splits one net.Listener by the first
// bytes of each connection. A gRPC client always starts with the HTTP/2
// preface ("PRI * HTTP/2.0...") or, under TLS, a TLS record (0x16), so a
// connection that starts with this package's magic hello ("RPCLAB-SC/1\n")
// is told apart from the first read and never reaches the gRPC server. The
// bytes then flow on a TCP connection of their own, with no second
// multiplexer, window or framing beside TCP's.
//
// Both ways were measured (BenchmarkTransfer: 64 MiB each way on loopback,
// client and server in one process, one run of 20 transfers on a 2-core
// machine shared with other work, so MB/s are rough):
//
//	path                     download MB/s  B/op      allocs  upload MB/s  B/op
//	tcp (a connection each)  2117           1868      24      2141         14975
//	sidechannel (this)       2165           26058     253     2691         23318
//	yamux, 256 KiB window    1440           938122    1069    1489         942155
//	yamux, 16 MiB window     1441           41296243  570     1317         40418920
//
// The split runs at TCP's speed with a fixed cost per call (the gRPC call
// and the hello: TestAllocsPerCall finds about 80 KB, 64 KiB of it the
// test's own read buffer, whether 1 MiB or 64 MiB moves); yamux, the byte path alone without a gRPC call, moved a
// third less and allocated per byte (its stream buffers). Splitting by
// first bytes was kept.
//
// The protocol, in full:
//
//  1. The client mints an id (128 bits from crypto/rand), dials the gRPC
//     address, writes the magic, then (when TLS is configured) runs a TLS
//     handshake with the same configuration as its gRPC connection, then
//     writes the 16 id bytes inside TLS.
//  2. The client starts its call with the id, hex-encoded, in the metadata
//     key MetadataKey.
//  3. The server's handler calls Server.Accept with the call's context:
//     it gets the connection that presented the call's id, for this call
//     only. Whichever of the hello and the call arrives first waits for the
//     other, up to the expiry (WithExpiry; a hello waits at most
//     WithHelloExpiry); an id is claimed once and refused afterwards; at
//     most WithMaxPending calls and, apart, WithMaxHellos hellos wait at
//     once.
//  4. The handler moves the bytes (either way) and returns; its status is
//     the transfer's outcome, and StatusError maps a broken transfer to one.
//
// Lifetimes are tied both ways: when the call ends, is cancelled or passes
// its deadline, the server side of the sidechannel is closed; when the
// client closes the sidechannel with an error (Conn.CloseWithError), the
// call is cancelled, and a server write that the client stopped reading
// fails after WithWriteTimeout and ends the call with DeadlineExceeded.
//
// A connection that sends nothing is closed after WithHelloTimeout, and at
// most WithMaxHandshakes connections are read for their first bytes at once
// (gRPC's included): a flood of half-open connections costs a bounded number
// of goroutines and file descriptors, and each is freed at its deadline. A
// hello needs no call, so a stranger can send many: hellos have a budget
// apart from the calls' (a flood never refuses a call), a short life, and
// past the budget the oldest hello of the peer holding the most is closed
// to admit a new one, so a real client's hello, followed at once by its
// call, still gets through (TestHelloFloodLeavesTransfers in package
// server runs it against a real server).
package sidechannel
