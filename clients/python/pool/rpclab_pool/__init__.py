# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""A pool of grpcio channels, each with its own TCP connection, that generated
stubs take as one channel: FooStub(ChannelPool(target, 4)). See README.md."""

from rpclab_pool._pool import LOCAL_SUBCHANNEL_POOL, ChannelPool, Policy, pick

__all__ = ["ChannelPool", "Policy", "LOCAL_SUBCHANNEL_POOL", "pick"]
