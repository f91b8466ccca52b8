# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The README's example: 100 RPCs through a pool of 4 channels to the
target in argv[1] (rpclab serve), with the stubs of grpcio's own
grpc.testing.BenchmarkService that the test generates beside it."""

import sys

import rpclab_pool
from benchmark_service_pb2_grpc import BenchmarkServiceStub
from messages_pb2 import SimpleRequest

with rpclab_pool.ChannelPool(sys.argv[1], 4, credentials=rpclab_pool.INSECURE) as pool:
    stub = BenchmarkServiceStub(pool)
    for _ in range(100):
        stub.UnaryCall(SimpleRequest(response_size=1), timeout=10)
    print("100 RPCs over", len(pool.channels), "channels, in flight now:", pool.inflight())
