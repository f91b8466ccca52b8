# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""Growth at the server's stream limit, against a real server: 16 RPCs in
flight (asyncio tasks on the grpc.aio pool) through a pool of size 1, with
growth on (max_connections 8, streams_per_connection 4) and off. For each,
the connections to the server as the kernel has them (this process's
sockets, /proc/self/fd and /proc/net/tcp) while the 16 run, and the RPCs per
second over a fixed interval. Prints one JSON object; clients/conformance
runs it against `rpclab serve --max-concurrent-streams 4 --delay 2ms`.

    python -m tests.streamlimit 127.0.0.1:PORT [seconds]
"""

import asyncio
import json
import sys
import time

import rpclab_pool
from rpclab_pool import aio as pool_aio

from rpclab_client import pb
from tests.test_pool import connections_to

INFLIGHT = 16


async def run(target, seconds, **growth):
    port = int(target.rsplit(":", 1)[1])
    pool = pool_aio.ChannelPool(target, 1, credentials=rpclab_pool.INSECURE, **growth)
    stub = pb.BenchmarkServiceStub(pool)
    done = 0
    phase = "warm"
    counted = asyncio.Event()

    async def worker():
        nonlocal done
        while phase != "stop":
            await stub.UnaryCall(pb.SimpleRequest(), timeout=30)
            done += 1
            if done == 400:
                counted.set()

    tasks = [asyncio.ensure_future(worker()) for _ in range(INFLIGHT)]
    await asyncio.wait_for(counted.wait(), 60)
    conns = connections_to(port)
    n0, t0 = done, time.monotonic()
    await asyncio.sleep(seconds)  # the measured interval, not a synchronisation
    rps = (done - n0) / (time.monotonic() - t0)
    phase = "stop"
    await asyncio.gather(*tasks)
    channels = len(pool.channels)
    await pool.close()
    return {"conns": conns, "channels": channels, "rps": round(rps), "resizes": pool.resizes}


async def main():
    target = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    on = await run(target, seconds, max_connections=8, streams_per_connection=4)
    off = await run(target, seconds)
    print(json.dumps({"on": on, "off": off, "ratio": round(on["rps"] / max(off["rps"], 1), 2)}))


if __name__ == "__main__":
    asyncio.run(main())
