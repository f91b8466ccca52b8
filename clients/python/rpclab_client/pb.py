# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The stubs build.sh generates from ../../proto into the package
rpclab_client._gen (its imports made package-relative, so the protos'
grpc.testing package needs no place inside grpcio's own grpc package)."""

try:
    from rpclab_client._gen import benchmark_service_pb2_grpc, messages_pb2
except ImportError as e:
    raise ImportError(f"generated stubs not found ({e}): run clients/python/build.sh") from e

BenchmarkServiceStub = benchmark_service_pb2_grpc.BenchmarkServiceStub
SimpleRequest = messages_pb2.SimpleRequest
Payload = messages_pb2.Payload
