# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""A pool of grpcio channels, each with its own TCP connection, that generated
stubs take as one channel: FooStub(ChannelPool(target, 4, credentials=...)).
rpclab_pool.aio has the grpc.aio pool. See README.md and docs/pool.md."""

from rpclab_pool._core import (
    DEFAULT_GRACE,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_REDIAL_AFTER,
    INSECURE,
    LOCAL_SUBCHANNEL_POOL,
    MAX_SIZE,
    Policy,
    __version__,
    default_size,
    pick,
)
from rpclab_pool._pool import ChannelPool

__all__ = [
    "ChannelPool",
    "Policy",
    "INSECURE",
    "MAX_SIZE",
    "DEFAULT_GRACE",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_REDIAL_AFTER",
    "LOCAL_SUBCHANNEL_POOL",
    "default_size",
    "pick",
    "__version__",
]
