# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""A server killed and restarted under load: 4 threads of unary RPCs through
a pool of 3 (least-loaded) to argv[1]. Prints "running" after 200 RPCs, then
waits for a line on stdin (the server has been killed and started again on
the same port), runs until 200 more RPCs succeed, and prints one JSON
object: the RPCs that succeeded, the failures by code, and the connections
to the server as the kernel has them once the pool is connected again.
clients/conformance drives it against `rpclab serve`.

    python -m tests.restart 127.0.0.1:PORT
"""

import json
import sys
import threading

import grpc
import rpclab_pool

from rpclab_client import pb
from tests.test_pool import connections_to


def main():
    target = sys.argv[1]
    port = int(target.rsplit(":", 1)[1])
    pool = rpclab_pool.ChannelPool(target, 3, credentials=rpclab_pool.INSECURE, policy="least-loaded")
    stub = pb.BenchmarkServiceStub(pool)
    cond = threading.Condition()
    state = {"ok": 0, "failed": {}, "stop": False}

    def caller():
        while not state["stop"]:
            try:
                stub.UnaryCall(pb.SimpleRequest(), timeout=10)
                with cond:
                    state["ok"] += 1
                    cond.notify_all()
            except grpc.RpcError as e:
                with cond:
                    name = e.code().name
                    state["failed"][name] = state["failed"].get(name, 0) + 1

    threads = [threading.Thread(target=caller) for _ in range(4)]
    for t in threads:
        t.start()
    with cond:
        cond.wait_for(lambda: state["ok"] >= 200, 60)
    print("running", flush=True)
    sys.stdin.readline()
    with cond:
        before = state["ok"]
        recovered = cond.wait_for(lambda: state["ok"] >= before + 200, 60)
        state["stop"] = True
    for t in threads:
        t.join()
    pool.connect(30)
    out = {"ok": state["ok"], "failed": state["failed"], "recovered": recovered, "conns": connections_to(port)}
    pool.close()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
