# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The stubs build.sh generates from ../../proto into gen/.

The protos' package is grpc.testing, so protoc's Python output imports
"from grpc.testing import messages_pb2": a subpackage of grpcio's own grpc
package. grpcio ships no grpc.testing, so gen/grpc is added to grpc's
package path and the generated files load unchanged."""

import os

import grpc

GEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gen")
_dir = os.path.join(GEN, "grpc")
if not os.path.isdir(os.path.join(_dir, "testing")):
    raise ImportError(f"generated stubs not found in {_dir}/testing: run clients/python/build.sh")
if _dir not in grpc.__path__:
    grpc.__path__.append(_dir)

from grpc.testing import benchmark_service_pb2_grpc  # noqa: E402
from grpc.testing import messages_pb2  # noqa: E402

BenchmarkServiceStub = benchmark_service_pb2_grpc.BenchmarkServiceStub
SimpleRequest = messages_pb2.SimpleRequest
Payload = messages_pb2.Payload
